import { AuthError, ContractError, UnavailableError } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import type { Clock } from '../fetch/clock.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import { Pacer } from '../fetch/pacer.js';
import type { Logger } from '../log/logger.js';
import { yesterday, type CalendarDay } from '../window/days.js';
import { describeViolation } from './check.js';
import { METRICS, type MetricName } from './descriptors.js';
import { resultEncoder } from './encode.js';
import { decodePage } from './page.js';
import { requestScope, unitFirstPageUrl, unitLabel, type Unit } from './unit.js';

export interface ProbeSettings {
  readonly baseUrl: URL;
  readonly credentials: ClientCredentials;
  readonly timeoutMs: number;
  readonly retries: number;
  /** `--max-rps`: the pace's cap, requests a second. */
  readonly maxRps?: number;
  /** `--max-wait`: the cap on every wait the vendor asks for. */
  readonly maxWaitMs?: number;
  /** What backoffs and the pacer wait on (default: the system's). */
  readonly clock?: Clock;
  readonly logger: Logger;
  /** Where the proxy variables are read. */
  readonly env: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  readonly now: Date;
}

export type ProbeResult =
  | { readonly metric: MetricName; readonly status: 'ok'; readonly day: CalendarDay; readonly count: number }
  | { readonly metric: MetricName; readonly status: 'failed'; readonly error: unknown }
  | { readonly metric: MetricName; readonly status: 'not-checked' };

/**
 * One small request per metric (the first result of yesterday's window), checked like an import's page: the URL
 * answers, the credentials are accepted, and the body is the API's. A rejected credential or an unreachable server
 * ends the probe (every other request would say the same); the metrics left are not checked.
 */
export async function probeMetrics(metrics: readonly MetricName[], settings: ProbeSettings): Promise<ProbeResult[]> {
  const dispatcher = createDispatcher({ connections: 1, timeoutMs: settings.timeoutMs, env: settings.env });
  // One pace for the probes, like an import's units share one.
  const pacer = new Pacer({
    logger: settings.logger,
    ...(settings.maxWaitMs === undefined ? {} : { maxWaitMs: settings.maxWaitMs }),
    ...(settings.clock ? { clock: settings.clock } : {}),
    ...(settings.maxRps === undefined ? {} : { maxRps: settings.maxRps }),
  });
  const client = new HttpClient({
    dispatcher,
    timeoutMs: settings.timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: settings.retries },
    logger: settings.logger,
    ...(settings.signal ? { signal: settings.signal } : {}),
    ...(settings.clock ? { clock: settings.clock } : {}),
    pacer,
  });
  const headers = { authorization: basicAuthorization(settings.credentials), accept: 'application/json' };
  const day = yesterday(settings.now);
  const results: ProbeResult[] = [];
  let stopped = false;
  try {
    for (const metric of metrics) {
      if (stopped) {
        results.push({ metric, status: 'not-checked' });
        continue;
      }
      const unit: Unit = { metric: METRICS[metric], day };
      try {
        const page = await client.send(
          { method: 'GET', url: unitFirstPageUrl(unit, settings.baseUrl, 1), headers, label: `${unitLabel(unit)} page 1` },
          (response) =>
            decodePage(response.body, {
              metric: unit.metric,
              scope: requestScope(unit),
              encode: resultEncoder(unit.metric, { format: 'ndjson', shape: 'rows' }),
            }),
        );
        const rejected = page.rejected[0];
        if (rejected)
          throw new ContractError(`${unitLabel(unit)} page 1: a result breaks the data contract: ${describeViolation(rejected)}`);
        results.push({ metric, status: 'ok', day, count: page.count });
      } catch (error) {
        results.push({ metric, status: 'failed', error });
        stopped = error instanceof AuthError || error instanceof UnavailableError;
      }
    }
  } finally {
    await dispatcher.close();
  }
  return results;
}
