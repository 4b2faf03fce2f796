/** What the periodic `cache hits` line reports. */
export interface HitSummaryFields {
  readonly cacheHits: number;
  readonly windowSeconds: number;
  /** Hits per application, e.g. {"com.acme.shop": 1200}. */
  readonly applications: Record<string, number>;
  readonly meanResponseTimeMs: number;
  readonly maxResponseTimeMs: number;
}

/**
 * Counts the cache hits whose `request completed` line is debug, so that the default info log still says how many
 * tokens were served (one line per interval instead of one per request: that line cost about 40% of the
 * cached-token throughput). Applications are the configured ones only (a hit needs one), so the map stays small.
 */
export class HitSummary {
  private hits = 0;
  private readonly byApplication = new Map<string, number>();
  private totalMs = 0;
  private maxMs = 0;
  private windowStart: number;

  constructor(private readonly now: () => number = Date.now) {
    this.windowStart = now();
  }

  record(application: string, responseTimeMs: number): void {
    this.hits += 1;
    this.byApplication.set(application, (this.byApplication.get(application) ?? 0) + 1);
    this.totalMs += responseTimeMs;
    if (responseTimeMs > this.maxMs) this.maxMs = responseTimeMs;
  }

  /** The fields for the window since the last take, then starts a new window; undefined when there was no hit. */
  take(): HitSummaryFields | undefined {
    const now = this.now();
    const windowSeconds = Math.round((now - this.windowStart) / 100) / 10;
    this.windowStart = now;
    if (this.hits === 0) return undefined;
    const summary: HitSummaryFields = {
      cacheHits: this.hits,
      windowSeconds,
      applications: Object.fromEntries(this.byApplication),
      meanResponseTimeMs: Math.round((this.totalMs / this.hits) * 10) / 10,
      maxResponseTimeMs: this.maxMs,
    };
    this.hits = 0;
    this.byApplication.clear();
    this.totalMs = 0;
    this.maxMs = 0;
    return summary;
  }
}
