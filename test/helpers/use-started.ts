import { afterAll, beforeAll } from 'vitest';
import { liveView } from './live-view.js';

/**
 * A server the tests of a file (or a describe block) share: started before them (`beforeAll`, with `timeoutMs` for a
 * slow start) and stopped after them (`afterAll`). Read it or call it, as `liveView` says.
 */
export function useStarted<T extends object>(
  what: string,
  start: () => Promise<T>,
  stop: (started: T) => Promise<void> | void,
  timeoutMs?: number,
): T & (() => T) {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, timeoutMs);
  afterAll(async () => {
    if (started !== undefined) await stop(started);
  });
  return liveView(() => {
    if (started === undefined) throw new Error(`${what} is started before the tests`);
    return started;
  });
}
