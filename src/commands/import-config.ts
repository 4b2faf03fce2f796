import { UsageError } from '../errors.js';
import { checkOutputOptions } from '../destination/capabilities.js';
import { capabilitiesOf } from '../destination/open.js';
import { parseBaseUrl } from '../fetch/urls.js';
import type { ApiSection, ImportConfig, WindowSection } from '../import/config.js';
import { LINEAGE_ENV, resolveLineageSettings } from '../lineage/settings.js';
import { resolveCredentials } from './credentials.js';
import type { IMPORT_OPTIONS } from './import-options.js';
import { envValue, type ParsedOptions } from './options.js';
import { windowFromFlags } from './window-flags.js';

/** Everything a run needs, checked before any request: a bad flag is exit 2 with one line naming the fix. */
export async function resolveImportConfig(
  { values: options, given }: ParsedOptions<typeof IMPORT_OPTIONS>,
  env: NodeJS.ProcessEnv,
  metricCount: number,
): Promise<ImportConfig> {
  const named = windowFromFlags(options);
  const { catchUp } = options;
  if (catchUp && named !== undefined) throw new UsageError('--catch-up cannot be combined with --date or --from/--to');
  if (!catchUp && given('lookback') !== undefined) {
    throw new UsageError('--lookback needs --catch-up (a backfill names its days with --from/--to)');
  }
  const days: WindowSection['days'] = catchUp
    ? { kind: 'catch-up', maxDays: options.maxDays, lookback: options.lookback }
    : (named ?? { kind: 'default' });

  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);

  const { output, shape, state: stateLocation } = options;
  // What the destination holds decides which of these it takes, and a folder's format may be its state's (undefined).
  const format = checkOutputOptions(capabilitiesOf(output), {
    format: options.format,
    formatFrom: given('format'),
    layoutFrom: given('layout'),
    shape,
    state: stateLocation,
    catchUp,
    metricCount,
  });
  const lineageEnv = Object.fromEntries(Object.entries(LINEAGE_ENV).map(([key, name]) => [key, envValue(env, name)]));
  const lineage = resolveLineageSettings(options.openlineageUrl, lineageEnv);
  if (options.quiet && options.verbose) throw new UsageError('--quiet and --verbose contradict each other; pick one');

  const api: ApiSection = {
    baseUrl,
    pageSize: options.pageSize,
    concurrency: options.concurrency,
    ...(options.maxRps === undefined ? {} : { maxRps: options.maxRps }),
    maxWaitMs: options.maxWait,
    maxResults: options.maxResults,
    retries: options.retries,
    timeoutMs: options.timeout,
  };
  const sections = {
    window: {
      days,
      ...(options.days === undefined ? {} : { dayMode: options.days }),
      storeCodes: [...new Set(options.store)],
    },
    judgement: { settleDays: options.settleDays, giveUpDays: options.giveUpDays, onSuspect: options.onSuspect },
    output: {
      destination: output,
      ...(options.layout === undefined ? {} : { layout: options.layout }),
      ...(format === undefined ? {} : { format }),
      shape,
      onInvalid: options.onInvalid,
      ...(stateLocation === undefined ? {} : { stateLocation }),
      s3ForcePathStyle: options.s3ForcePathStyle,
      settingsFromEnv: SETTINGS_FLAGS.filter(([, key]) => given(key) === 'env').map(([name]) => name),
      ...(lineage === undefined ? {} : { lineage }),
    },
    log: { level: options.quiet ? 'error' : options.verbose ? 'debug' : 'info', format: options.logFormat },
  } as const;
  // --dry-run sends nothing, so it needs no credentials; credentials last, so every other mistake is reported first.
  if (options.dryRun) return { dryRun: true, api, ...sections };
  const { clientId, clientSecret, secretOnCommandLine } = await resolveCredentials(options, given);
  return { dryRun: false, api: { ...api, credentials: { clientId, clientSecret }, secretOnCommandLine }, ...sections };
}

/** The settings an output keeps, and the option each comes from. */
const SETTINGS_FLAGS = [
  ['mode', 'days'],
  ['layout', 'layout'],
  ['format', 'format'],
] as const;
