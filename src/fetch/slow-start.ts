/**
 * Requests in flight a run may add for each answer accepted while the vendor's limit is unknown: 0.5 grows them by
 * half each round trip (1 + half the answers accepted), so the first window a vendor counts fills a few requests at a time,
 * and the requests in flight when its first 429 comes are few; a vendor without a limit is at full concurrency
 * after a dozen round trips.
 */
export const SLOW_START_GROWTH = 0.5;

/**
 * A slow start while nothing says how fast the vendor may be asked (no `--max-rps`, nothing announced, no 429 yet):
 * the requests in flight grow from the first answers, rather than every unit's request leaving at once. Once a limit
 * is known, it ends for good.
 */
export class SlowStart {
  private inFlight = 0;
  private accepted = 0;
  private ended = false;

  /** Whether another request may leave now. */
  allows(): boolean {
    return this.ended || this.inFlight < 1 + Math.floor(SLOW_START_GROWTH * this.accepted);
  }

  sent(): void {
    this.inFlight++;
  }

  /** A request is over: `accepted` unless with a 429, which grows nothing (the outage gate sees to failures). */
  over(accepted: boolean): void {
    this.inFlight--;
    if (accepted) this.accepted++;
  }

  /** A limit is known: the pace follows it from now on. */
  end(): void {
    this.ended = true;
  }
}
