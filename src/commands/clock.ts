import { UsageError } from '../errors.js';
import { frozenClock, systemWallClock, type WallClock } from '../window/wall-clock.js';

/**
 * The command's clock. `AREA_METRICS_NOW` (an ISO 8601 instant) stops it there for tests, which must say when a day
 * is over without waiting for it; it is read here, by the commands, and passed down, never read by the core.
 */
export function clockOf(env: NodeJS.ProcessEnv): WallClock {
  const text = env.AREA_METRICS_NOW;
  if (text === undefined || text === '') return systemWallClock;
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(ms)) {
    throw new UsageError(`AREA_METRICS_NOW ${JSON.stringify(text)} is not an ISO 8601 instant, e.g. 2026-11-23T18:28:00Z`);
  }
  return frozenClock(new Date(ms));
}

/** The command's now: one read of its clock. */
export function nowOf(env: NodeJS.ProcessEnv): Date {
  return clockOf(env)();
}
