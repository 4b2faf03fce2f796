import type { SandboxOptions } from '../../src/sandbox/index.js';

/**
 * Sandbox options for tests about something other than when a day ends (catch-up, state, concurrent runs): the
 * sandbox serves store-local days still running (yesterday's UTC window always holds some until 23:00Z), and its
 * clock stays at the moment this is called, so those days' values, which change every hour, do not change between
 * an import and the check of it.
 */
export function servingDaysInProgress(): Pick<SandboxOptions, 'serveInProgress' | 'now'> {
  const startedAt = new Date();
  return { serveInProgress: true, now: () => startedAt };
}
