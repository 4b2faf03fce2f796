import type { Clock } from '../../src/fetch/clock.js';

/** A clock whose waits take no time: each moves it forward instead, and is recorded. */
export interface VirtualClock extends Clock {
  /** Every wait asked for, in ms, in order. */
  readonly waits: number[];
  /** Virtual ms since the clock was made. */
  elapsed(): number;
}

/**
 * Time that moves only when something waits: a wait of `ms` asked at virtual time t ends at t + ms, and the clock
 * reads the latest end reached. Waits resolve on the next turn of the event loop, so the I/O of other requests goes on.
 */
export function virtualClock(start = Date.now()): VirtualClock {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    elapsed: () => now - start,
    sleep: (ms, signal) => {
      waits.push(ms);
      const until = now + Math.max(0, ms);
      return new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          if (signal?.aborted) {
            reject(signal.reason as Error);
            return;
          }
          now = Math.max(now, until);
          resolve();
        });
      });
    },
  };
}
