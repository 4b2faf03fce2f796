import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { Pacer } from '../fetch/pacer.js';
import type { ImportProgress } from '../log/progress.js';
import { fetchUnit, unitLabel, type Unit, type UnitData, type UnitFetchOptions } from '../metrics/unit.js';
import type { SettledConfig } from './config.js';

/**
 * How a unit is fetched: one connection pool and one HTTP client for the run, every request paced by the run's pacer
 * (whose clock the client waits on too), Basic auth on every request, pages shown as progress. `close` ends the pool.
 */
export function unitFetcher(
  config: SettledConfig & { readonly credentials: ClientCredentials },
  progress: ImportProgress,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  pacer: Pacer,
): { fetch: (unit: Unit) => Promise<UnitData>; close: () => Promise<void> } {
  const dispatcher = createDispatcher({ connections: config.concurrency + 2, timeoutMs: config.timeoutMs, env });
  const retry = { ...DEFAULT_RETRY_POLICY, retries: config.retries, maxRetryAfterMs: config.maxWaitMs };
  const client = new HttpClient({
    dispatcher,
    timeoutMs: config.timeoutMs,
    retry,
    logger: progress.logger,
    signal,
    clock: pacer.clock,
    pacer,
  });
  const options: UnitFetchOptions = {
    client,
    baseUrl: config.baseUrl,
    headers: { authorization: basicAuthorization(config.credentials), accept: 'application/json' },
    pageSize: config.pageSize,
    maxResults: config.maxResults,
    onInvalid: config.onInvalid,
    encoding: { format: config.format, shape: config.shape },
    logger: progress.logger,
    onPage: (unit, page, rowsSoFar) => progress.page(unitLabel(unit), page, rowsSoFar),
  };
  return { fetch: (unit) => fetchUnit(unit, options), close: () => dispatcher.close() };
}
