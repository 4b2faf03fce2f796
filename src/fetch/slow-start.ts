/**
 * Requests in flight a run may add for each answer accepted while the vendor's limit is unknown: a quarter grows them
 * by a quarter each round trip. When a vendor's window fills, the answers still coming in release a quarter of a
 * request each, so the 429s of the first episode are about a quarter of its quota plus one (3 at 10 a second), and
 * a vendor without a limit sees full concurrency (16) after about a dozen round trips.
 */
export const SLOW_START_GROWTH = 0.25;

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
