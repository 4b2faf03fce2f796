import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ATTESTATION_RESULTS, type AttestationResult } from '../attestation/gate.js';
import type { BackoffState } from '../token/backoff.js';
import type { CacheOutcome, PlatformState } from '../token/token-broker.js';
import type { AuthCallOutcome } from '../token/token-source.js';

export interface MetricsSources {
  /** Platform name → its back-off, if calls are held back now. */
  readonly backoffStates: () => Map<string, BackoffState | undefined>;
  /** Every configured platform's state now (the config can be reloaded, so this is asked at each scrape). */
  readonly platformStates: () => Map<string, PlatformState>;
  /** Whether Redis answers; undefined when no Redis is configured (the gauge is then left out). */
  readonly redisUp?: () => boolean;
}

const PLATFORM_STATES: readonly PlatformState[] = ['ok', 'rejected', 'unset', 'backing-off'];

/**
 * The broker's Prometheus metrics, in a registry of its own (several brokers can run in one process). The hot path
 * only increments counters whose label children are created up front; gauges are computed when scraped.
 */
export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly tokenRequests: Counter<'outcome' | 'status'>;
  /** Plain numbers on the hot path (a prom-client increment hashes its labels); copied into the counter when scraped. */
  private readonly served: Record<CacheOutcome, number> = { hit: 0, shared: 0, miss: 0, coalesced: 0, stale: 0 };
  private readonly failed = new Map<number, number>();
  private readonly attested: Record<AttestationResult, number> = {
    valid: 0,
    missing: 0,
    invalid: 0,
    'other-app': 0,
    replayed: 0,
    'no-keys': 0,
  };
  private readonly authCalls: Counter<'status'>;
  private readonly authLatency: Histogram;

  constructor() {
    const served = this.served;
    const failed = this.failed;
    this.tokenRequests = new Counter({
      name: 'area_metrics_broker_token_requests_total',
      help: 'Token requests answered, by how: hit (memory), shared (Redis), miss (auth server), coalesced, stale, or error',
      labelNames: ['outcome', 'status'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [outcome, count] of Object.entries(served)) this.inc({ outcome, status: '200' }, count);
        for (const [status, count] of failed) this.inc({ outcome: 'error', status: String(status) }, count);
      },
    });
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
  }

  /** `area_metrics_broker_attestation_total{result}`, every result from 0 (when attestation is on). */
  countAttestation(): void {
    const attested = this.attested;
    new Counter({
      name: 'area_metrics_broker_attestation_total',
      help: 'Token requests by their attestation: valid, missing, invalid, other-app, replayed, no-keys (no issuer keys to check with)',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const result of ATTESTATION_RESULTS) this.inc({ result }, attested[result]);
      },
    });
  }

  attestation(result: AttestationResult): void {
    this.attested[result] += 1;
  }

  /** The gauges computed when scraped, from the parts that know the states. */
  watch(sources: MetricsSources): void {
    new Gauge({
      name: 'area_metrics_broker_auth_backoff',
      help: "1 while calls to the platform's auth server are held back after failures, else 0",
      labelNames: ['platform'],
      registers: [this.registry],
      collect() {
        this.reset();
        const states = sources.backoffStates();
        for (const platform of sources.platformStates().keys()) this.set({ platform }, states.get(platform) === undefined ? 0 : 1);
      },
    });
    new Gauge({
      name: 'area_metrics_broker_platform_state',
      help: '1 for the state each platform is in: ok, rejected (the auth server refused its credentials), unset (no secret), backing-off',
      labelNames: ['platform', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [platform, current] of sources.platformStates()) {
          for (const state of PLATFORM_STATES) this.set({ platform, state }, state === current ? 1 : 0);
        }
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

  /** The Prometheus text of every metric, and its content type. */
  async text(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  tokenServed(outcome: CacheOutcome): void {
    this.served[outcome] += 1;
  }

  tokenFailed(status: number): void {
    this.failed.set(status, (this.failed.get(status) ?? 0) + 1);
  }

  authCall(outcome: AuthCallOutcome, seconds: number): void {
    this.authCalls.labels({ status: String(outcome) }).inc();
    this.authLatency.observe(seconds);
  }
}
