import { basicAuthorization } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { Pacer } from '../fetch/pacer.js';
import type { ImportProgress } from '../log/progress.js';
import { fetchUnit, unitLabel, type Unit, type UnitData, type UnitFetchOptions } from '../metrics/unit.js';
import type { ApiAccess, SettledOutput } from './config.js';

/**
 * How a unit is fetched: one connection pool and one HTTP client for the run, every request paced by the run's pacer
 * (whose clock the client waits on too), Basic auth on every request, pages shown as progress. `close` ends the pool.
 */
export function unitFetcher(
  api: ApiAccess,
  output: Pick<SettledOutput, 'format' | 'shape' | 'onInvalid'>,
  progress: ImportProgress,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  pacer: Pacer,
): { fetch: (unit: Unit) => Promise<UnitData>; close: () => Promise<void> } {
  const dispatcher = createDispatcher({ connections: api.concurrency + 2, timeoutMs: api.timeoutMs, env });
  const retry = { ...DEFAULT_RETRY_POLICY, retries: api.retries, maxRetryAfterMs: api.maxWaitMs };
  const client = new HttpClient({
    dispatcher,
    timeoutMs: api.timeoutMs,
    retry,
    logger: progress.logger,
    signal,
    clock: pacer.clock,
    pacer,
  });
  const options: UnitFetchOptions = {
    client,
    baseUrl: api.baseUrl,
    headers: { authorization: basicAuthorization(api.credentials), accept: 'application/json' },
    pageSize: api.pageSize,
    maxResults: api.maxResults,
    onInvalid: output.onInvalid,
    encoding: { format: output.format, shape: output.shape },
    logger: progress.logger,
    onPage: (unit, page, rowsSoFar) => progress.page(unitLabel(unit), page, rowsSoFar),
  };
  return { fetch: (unit) => fetchUnit(unit, options), close: () => dispatcher.close() };
}
