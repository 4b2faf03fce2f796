import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { Pacer } from '../fetch/pacer.js';
import type { ImportProgress } from '../log/progress.js';
import { fetchUnit, unitLabel, type Unit, type UnitData, type UnitFetchOptions } from '../metrics/unit.js';
import type { ImportConfig } from './import-config.js';

/** The window as the command line gave it, for the run's first line and the state's last run. */
function describeWindow(config: ImportConfig): string {
  const { window } = config;
  switch (window.kind) {
    case 'catch-up':
      return `--catch-up --max-days ${window.maxDays}${window.lookback ? ` --lookback ${window.lookback}` : ''}`;
    case 'date':
      return `--date ${window.date}`;
    case 'range':
      return `--from ${window.from} --to ${window.to ?? window.from}`;
    case 'default':
      return '(yesterday)';
  }
}

/** The window and, in local mode, the day mode, as the command line gave them. */
export function describeRun(config: ImportConfig): string {
  if (config.dayMode === 'utc') return describeWindow(config);
  return `--days local ${config.window.kind === 'default' ? '(the latest local day over everywhere)' : describeWindow(config)}`;
}

/** A word as a shell reads it: as it is when it is plain, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The flags that name this run's state on another command line (` -o ./data`), so a suggested command works as printed. */
export function stateFlags(config: ImportConfig): string {
  const { output } = config.output;
  const flags = [
    ...(output === undefined ? [] : ['-o', shellWord(output)]),
    ...(config.statePath === undefined ? [] : ['--state', shellWord(config.statePath)]),
    ...(config.s3ForcePathStyle ? ['--s3-force-path-style'] : []),
  ];
  return flags.map((flag) => ` ${flag}`).join('');
}

/**
 * How a unit is fetched: one connection pool and one HTTP client for the run, every request paced by the run's pacer
 * (whose clock the client waits on too), Basic auth on every request, pages shown as progress. `close` ends the pool.
 */
export function unitFetcher(
  config: ImportConfig & { readonly credentials: ClientCredentials },
  progress: ImportProgress,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  pacer: Pacer,
): { fetch: (unit: Unit) => Promise<UnitData>; close: () => Promise<void> } {
  const dispatcher = createDispatcher({ connections: config.concurrency + 2, timeoutMs: config.timeoutMs, env });
  const retry = { ...DEFAULT_RETRY_POLICY, retries: config.retries, maxRetryAfterMs: config.maxWaitMs };
  const client = new HttpClient({ dispatcher, timeoutMs: config.timeoutMs, retry, logger: progress.logger, signal, clock: pacer.clock, pacer });
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
