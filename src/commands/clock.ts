import { UsageError } from '../errors.js';

/**
 * The run's "now". `AREA_METRICS_NOW` (an ISO 8601 instant) sets it for tests, which must say when a day is over
 * without waiting for it; it is read here, by the commands, and passed down as `now`, never read by the core.
 */
export function nowOf(env: NodeJS.ProcessEnv): Date {
  const text = env.AREA_METRICS_NOW;
  if (text === undefined || text === '') return new Date();
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(ms)) {
    throw new UsageError(`AREA_METRICS_NOW ${JSON.stringify(text)} is not an ISO 8601 instant, e.g. 2026-11-23T18:28:00Z`);
  }
  return new Date(ms);
}
