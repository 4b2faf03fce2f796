/** One request sent: when, and whether the vendor answered it 429 (so it did not count against the vendor's quota). */
export interface Send {
  readonly at: number;
  throttled: boolean;
}

/** A quota of requests per window, as the pacer keeps to it. */
export interface Window {
  readonly quota: number;
  readonly windowMs: number;
}

/**
 * The latest requests sent (up to `capacity`), oldest first, in a ring: what a window is checked against (the
 * quota-th latest send must be a window ago) and what a 429 teaches (how many were accepted just before it).
 */
export class SendLog {
  private readonly ring: Send[] = [];
  private count = 0;

  constructor(readonly capacity: number) {}

  add(at: number): Send {
    const send: Send = { at, throttled: false };
    this.ring[this.count % this.capacity] = send;
    this.count++;
    return send;
  }

  /** The n-th latest send (1: the latest), if the log holds it. */
  private nthLatest(n: number): Send | undefined {
    if (n < 1 || n > Math.min(this.count, this.capacity)) return undefined;
    return this.ring[(this.count - n) % this.capacity];
  }

  /**
   * The earliest instant a request keeps to the window: `quota` requests in any `windowMs`, stretched by `margin`.
   * A quota larger than the log is kept to as the same rate over a shorter window.
   */
  allowedAt(window: Window, margin: number): number {
    const quota = Math.min(window.quota, this.capacity);
    const windowMs = (window.windowMs * quota) / window.quota;
    const oldest = this.nthLatest(quota);
    return oldest === undefined ? -Infinity : oldest.at + windowMs * (1 + margin);
  }

  /** Requests sent in [from, to) that were not answered 429. */
  acceptedBetween(from: number, to: number): number {
    let accepted = 0;
    for (let n = 1; ; n++) {
      const send = this.nthLatest(n);
      if (send === undefined || send.at < from) return accepted;
      if (send.at < to && !send.throttled) accepted++;
    }
  }
}
