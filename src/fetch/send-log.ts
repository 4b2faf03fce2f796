/**
 * One request sent: when, when the head of its answer came, whether it was a 429 (which the vendor's quota does not
 * count), and whether it is over (answered whole, or failed).
 */
export interface Send {
  readonly at: number;
  answeredAt?: number;
  throttled: boolean;
  over: boolean;
}

/** A quota of requests per window, as the pacer keeps to it. */
export interface Window {
  readonly quota: number;
  readonly windowMs: number;
}

/**
 * Windows are kept this much longer (a share of the window), for the granularity of timers and of the vendor's clock.
 */
export const SLACK = 0.01;

/**
 * The latest requests sent (up to `capacity`), in a ring: what a window is checked against (the quota-th latest
 * send must be a window ago) and what a 429 teaches (how many the vendor accepted just before it).
 */
export class SendLog {
  private readonly ring: Send[] = [];
  private count = 0;

  constructor(readonly capacity: number) {}

  add(at: number): Send {
    const send: Send = { at, throttled: false, over: false };
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
   * The earliest instant a request keeps to the window: at most `quota` requests in any `windowMs` as the vendor
   * counts them. The vendor counts a request when it reaches it, somewhere between its sending and its answer, so a
   * window runs from the answer of the request that opened it; while that one is unanswered, the instant is not
   * known yet (Infinity). A quota larger than the log is kept as the same rate over a shorter window.
   */
  allowedAt(window: Window): number {
    const quota = Math.min(window.quota, this.capacity);
    const windowMs = (window.windowMs * quota) / window.quota;
    const oldest = this.nthLatest(quota);
    if (oldest === undefined) return -Infinity;
    return oldest.answeredAt === undefined ? Infinity : oldest.answeredAt + windowMs * (1 + SLACK);
  }

  /** Requests sent by `at` that are not over yet. */
  unfinishedBy(at: number): number {
    let unfinished = 0;
    for (let n = 1; ; n++) {
      const send = this.nthLatest(n);
      if (send === undefined) return unfinished;
      if (send.at <= at && !send.over) unfinished++;
    }
  }

  /**
   * Requests sent by `at` and not answered 429 whose answer came less than `windowMs` before `refusedAt` (when the
   * vendor refused, at most `at`) or after it: what the vendor had counted in its window then. Requests sent more
   * than two windows earlier are not looked at.
   */
  acceptedAround(at: number, refusedAt: number, windowMs: number): number {
    let accepted = 0;
    for (let n = 1; ; n++) {
      const send = this.nthLatest(n);
      if (send === undefined || send.at < at - 2 * windowMs) return accepted;
      if (send.at <= at && !send.throttled && (send.answeredAt ?? Infinity) > refusedAt - windowMs) accepted++;
    }
  }
}
