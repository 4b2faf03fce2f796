import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { LimitSettings } from '../config/config.js';
import { BrokerProblem } from '../problem.js';

/**
 * The token route's limits, for every path that answers a token: a per-client rate (rate-limiter-flexible: in memory,
 * or in Redis so that every instance counts the same client together, falling back to memory while Redis fails) and a
 * cap on the requests being answered at once. `/healthz`, `/readyz` and `/metrics` are never limited.
 */
export class RequestLimits {
  private inFlight = 0;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly settings: LimitSettings,
    options: { readonly redis?: Redis; readonly keyPrefix: string },
  ) {
    const memory = new RateLimiterMemory({ points: settings.perClientPerMinute, duration: 60, keyPrefix: `${options.keyPrefix}rate` });
    this.limiter =
      options.redis === undefined
        ? memory
        : new RateLimiterRedis({
            storeClient: options.redis,
            points: settings.perClientPerMinute,
            duration: 60,
            keyPrefix: `${options.keyPrefix}rate`,
            // While Redis is down each instance counts on its own rather than refusing or waiting.
            rejectIfRedisNotReady: true,
            insuranceLimiter: memory,
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

  /** The 429 problem when the client has used its requests for this minute, else undefined. */
  admit(client: string): Promise<BrokerProblem | undefined> {
    // One promise per request, not an async function around another: this runs for every cached answer.
    return this.limiter.consume(client).then(
      () => undefined,
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) return undefined; // the store failed twice over: do not refuse for it
        return new BrokerProblem(
          'too-many-requests',
          `more than ${this.settings.perClientPerMinute} token requests a minute from this client; retry later`,
          undefined,
          Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        );
      },
    );
  }

  /** The 503 problem when every place in flight is taken. */
  overloaded(): BrokerProblem {
    return new BrokerProblem('overloaded', 'the broker is answering as many requests as it can; retry shortly', undefined, 1);
  }
}
