import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { LimitSettings } from '../config/config.js';
import { BrokerProblem } from '../problem.js';
import { ClientRates } from './client-rates.js';

/** A request's admission: undefined when admitted, else the problem that answers it. */
export type Admission = BrokerProblem | undefined;

const WINDOW_SECONDS = 60;

/**
 * The token route's limits, for every path that answers a token: a per-client rate (in memory, counted at once; or
 * in Redis with rate-limiter-flexible so that every instance counts the same client together, falling back to its
 * memory store while Redis fails) and a cap on the requests being answered at once. `/healthz`, `/readyz` and `/metrics` are never limited.
 */
export class RequestLimits {
  private inFlight = 0;
  /** The rate's store: in memory (answered synchronously), or Redis. */
  private readonly rates: ClientRates | RateLimiterAbstract;

  constructor(
    private readonly settings: LimitSettings,
    options: { readonly redis?: Redis; readonly keyPrefix: string },
  ) {
    this.rates =
      options.redis === undefined
        ? new ClientRates(settings.perClientPerMinute, WINDOW_SECONDS * 1000)
        : new RateLimiterRedis({
            storeClient: options.redis,
            points: settings.perClientPerMinute,
            duration: WINDOW_SECONDS,
            keyPrefix: `${options.keyPrefix}rate`,
            // While Redis is down each instance counts on its own rather than refusing or waiting.
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory({
              points: settings.perClientPerMinute,
              duration: WINDOW_SECONDS,
              keyPrefix: `${options.keyPrefix}rate`,
            }),
          });
  }

  /** Takes a place among the requests in flight; false (answer 503) when they are all taken. Pair with leave(). */
  enter(): boolean {
    if (this.inFlight >= this.settings.maxInFlight) return false;
    this.inFlight += 1;
    return true;
  }

  leave(): void {
    this.inFlight -= 1;
  }

  /**
   * The 429 problem when the client has used its requests for this minute, else undefined: at once when the rate is
   * counted in memory, a promise when it is counted in Redis.
   */
  admit(client: string): Admission | Promise<Admission> {
    const rates = this.rates;
    if (rates instanceof ClientRates) {
      const waitMs = rates.take(client);
      return waitMs === undefined ? undefined : this.tooMany(waitMs);
    }
    return rates.consume(client).then(
      () => undefined,
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) return undefined; // the store failed twice over: do not refuse for it
        return this.tooMany(rejection.msBeforeNext);
      },
    );
  }

  private tooMany(waitMs: number): BrokerProblem {
    return new BrokerProblem(
      'too-many-requests',
      `more than ${this.settings.perClientPerMinute} token requests a minute from this client; retry later`,
      undefined,
      Math.max(1, Math.ceil(waitMs / 1000)),
    );
  }

  /** The 503 problem when every place in flight is taken. */
  overloaded(): BrokerProblem {
    return new BrokerProblem('overloaded', 'the broker is answering as many requests as it can; retry shortly', undefined, 1);
  }
}
