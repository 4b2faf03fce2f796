/**
 * Requests in flight a run may add for each answer accepted while the vendor's limit is unknown: a fifth grows them
 * by a fifth each round trip. When a vendor's unannounced window fills, the answers still coming in release a fifth
 * of a request each, so the 429s of the first episode are about a fifth of its quota and one or two (3 at 10 a
 * second, at any concurrency), and a vendor without a limit sees full concurrency (16) after about a dozen round
 * trips. Simulated against a sliding window at 50 ms round trips, a quarter cost more and refused no fewer.
 */
export const SLOW_START_GROWTH = 0.2;

/**
 * A slow start while nothing says how fast the vendor may be asked (no `--max-rps`, nothing announced, no 429 yet):
 * the requests in flight grow from the first answers, rather than every unit's request leaving at once, unless the
 * run is large enough that its concurrency is a small share of it (see `allow`). Once a limit is known, it ends for
 * good.
 */
export class SlowStart {
  private inFlight = 0;
  private accepted = 0;
  private ended = false;
  /** Requests in flight allowed whatever the answers so far: a share of the run small enough to be refused whole. */
  private allowance = 1;

  /** Whether another request may leave now. */
  allows(): boolean {
    // Rounded up: two in flight from the first answer on, not after several alone.
    return this.ended || this.inFlight < Math.max(this.allowance, 1 + Math.ceil(SLOW_START_GROWTH * this.accepted));
  }

  /**
   * At least `inFlight` requests may be in flight from now on: the first 429 refuses at most the requests in flight
   * when the vendor's window fills, so as many as a small share of the run's requests may go at once unafraid.
   */
  allow(inFlight: number): void {
    this.allowance = Math.max(this.allowance, inFlight);
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
