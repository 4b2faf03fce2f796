import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BackoffState } from './backoff.js';
import type { CacheOutcome } from './token-broker.js';
import type { AuthCallOutcome } from './token-source.js';

export interface MetricsSources {
  /** Platform name → its back-off, if calls are held back now. */
  readonly backoffStates: () => Map<string, BackoffState | undefined>;
  readonly platforms: readonly string[];
  /** Whether Redis answers; undefined when no Redis is configured (the gauge is then left out). */
  readonly redisUp?: () => boolean;
}

/**
 * The broker's Prometheus metrics, in a registry of its own (several brokers can run in one process). The hot path
 * only increments counters whose label children are created up front; gauges are computed when scraped.
 */
export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly tokenRequests: Counter<'outcome' | 'status'>;
  private readonly served: Record<CacheOutcome, Counter.Internal>;
  private readonly authCalls: Counter<'status'>;
  private readonly authLatency: Histogram;

  constructor(sources: MetricsSources) {
    this.tokenRequests = new Counter({
      name: 'area_metrics_broker_token_requests_total',
      help: 'Token requests answered, by how: hit (memory), shared (Redis), miss (auth server), coalesced, stale, or error',
      labelNames: ['outcome', 'status'],
      registers: [this.registry],
    });
    const child = (outcome: CacheOutcome): Counter.Internal => this.tokenRequests.labels({ outcome, status: '200' });
    this.served = { hit: child('hit'), shared: child('shared'), miss: child('miss'), coalesced: child('coalesced'), stale: child('stale') };
    this.authCalls = new Counter({
      name: 'area_metrics_broker_auth_requests_total',
      help: 'Calls to the auth servers, by HTTP status, or timeout, network, too-large',
      labelNames: ['status'],
      registers: [this.registry],
    });
    this.authLatency = new Histogram({
      name: 'area_metrics_broker_auth_request_duration_seconds',
      help: 'How long calls to the auth servers took',
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    new Gauge({
      name: 'area_metrics_broker_auth_backoff',
      help: '1 while calls to the platform\'s auth server are held back after failures, else 0',
      labelNames: ['platform'],
      registers: [this.registry],
      collect() {
        const states = sources.backoffStates();
        for (const platform of sources.platforms) this.set({ platform }, states.get(platform) === undefined ? 0 : 1);
      },
    });
    const redisUp = sources.redisUp;
    if (redisUp !== undefined) {
      new Gauge({
        name: 'area_metrics_broker_redis_up',
        help: '1 while the shared Redis cache answers, else 0',
        registers: [this.registry],
        collect() {
          this.set(redisUp() ? 1 : 0);
        },
      });
    }
  }

  tokenServed(outcome: CacheOutcome): void {
    this.served[outcome].inc();
  }

  tokenFailed(status: number): void {
    this.tokenRequests.labels({ outcome: 'error', status: String(status) }).inc();
  }

  authCall(outcome: AuthCallOutcome, seconds: number): void {
    this.authCalls.labels({ status: String(outcome) }).inc();
    this.authLatency.observe(seconds);
  }
}
