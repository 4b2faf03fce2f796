/**
 * The time an HTTP client reads and waits on. The real one is `systemClock`; tests pass a virtual one through the
 * client's (and the pacer's) options, so retries, backoffs and Retry-After holds are tested without waiting them out.
 */
export interface Clock {
  /** Milliseconds since the epoch; never goes back (pacing measures intervals with it). */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Node's timers hold at most a signed 32-bit number of milliseconds (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The waits on each signal, woken by one abort listener. */
const sleepersOf = new WeakMap<AbortSignal, Set<(reason: Error) => void>>();

/**
 * Calls `wake` with the signal's reason when it aborts; returns the function that forgets it. However many waits
 * share a signal, it gets one listener: a listener per waiting request would pass Node's limit of 10 at
 * `--concurrency` 11 (a MaxListenersExceededWarning on stderr).
 */
export function onAbort(signal: AbortSignal, wake: (reason: Error) => void): () => void {
  let sleepers = sleepersOf.get(signal);
  if (sleepers === undefined) {
    const created = new Set<(reason: Error) => void>();
    sleepers = created;
    sleepersOf.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        // Aborts here carry an Error (an InterruptedError, the run's halt, a timeout).
        for (const sleeper of created) sleeper(signal.reason as Error);
        created.clear();
      },
      { once: true },
    );
  }
  const own = sleepers;
  own.add(wake);
  return () => {
    own.delete(wake);
  };
}

export const systemClock: Clock = {
  // Monotonic, unlike Date.now(), which a clock adjustment can move back in the middle of a window.
  now: () => performance.timeOrigin + performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      let forget = (): void => {};
      // Longer than Node's timers hold, a timeout fires at once (with a TimeoutOverflowWarning): wake early instead;
      // every wait here is bounded by --max-wait, and the pacer loops on its own deadline anyway.
      const timer = setTimeout(
        () => {
          forget();
          resolve();
        },
        Math.min(Math.max(0, ms), MAX_TIMER_MS),
      );
      if (signal) {
        forget = onAbort(signal, (reason) => {
          clearTimeout(timer);
          reject(reason);
        });
      }
    }),
};

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const forget = onAbort(signal, reject);
    promise.then(
      (value) => {
        forget();
        resolve(value);
      },
      (error: Error) => {
        forget();
        reject(error);
      },
    );
  });
}

/** A promise and the function that resolves it (Promise.withResolvers needs Node 22). */
export function signalled(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
