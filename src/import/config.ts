import type { DestinationSpec } from '../destination/spec.js';
import type { ClientCredentials } from '../fetch/basic-auth.js';
import type { LineageSettings } from '../lineage/settings.js';
import type { LogFormat, LogLevel } from '../log/logger.js';
import type { OutputFormat, OutputShape } from '../output/format.js';
import type { Layout } from '../output/layout.js';
import type { SuspectMode } from '../state/judgement/suspect.js';
import type { DayMode } from '../window/day-mode.js';
import type { WindowRequest } from '../window/requested-days.js';

/** Everything an import needs, checked before any request (the import commands resolve it from their options). */
export interface ImportConfig {
  readonly baseUrl: URL;
  /** Absent only for --dry-run, which needs none. */
  readonly credentials?: ClientCredentials;
  /** The secret came as `--client-secret`, visible to every user of the machine: the run warns once. */
  readonly secretOnCommandLine: boolean;
  readonly window: WindowRequest | { readonly kind: 'catch-up'; readonly maxDays: number; readonly lookback: number };
  /** UTC days or store-local calendar days; absent: the state's (UTC for a new one). */
  readonly dayMode?: DayMode;
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly onSuspect: SuspectMode;
  readonly storeCodes: readonly string[];
  /** Which of the settings an output keeps came from an env var, not a flag: a refusal names the variable. */
  readonly settingsFromEnv: readonly ('mode' | 'layout' | 'format')[];
  readonly output: DestinationSpec;
  /** How files are named under a folder or bucket prefix; stdout has none. Absent: the state's (flat for a new one). */
  readonly layout?: Layout;
  /** Where and as whom the run posts its OpenLineage events; absent: none. */
  readonly lineage?: LineageSettings;
  /** Absent: the state's (CSV for a new one); always given for stdout, which keeps none. */
  readonly format?: OutputFormat;
  readonly shape: OutputShape;
  readonly pageSize: number;
  readonly concurrency: number;
  /** `--max-rps`: the pace's cap, requests a second. */
  readonly maxRps?: number;
  /** `--max-wait`: the cap on every wait the vendor asks for. */
  readonly maxWaitMs: number;
  /** `--max-results`: a unit's bound, from which its pages and a page's bytes are bounded. */
  readonly maxResults: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly onInvalid: 'fail' | 'skip';
  /** `--state`: where the state is kept instead of beside the data, a file path or an `s3://bucket/key` URL. */
  readonly stateLocation?: string;
  readonly s3ForcePathStyle: boolean;
  readonly dryRun: boolean;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** A config with the settings an output keeps settled: stated by the run, or taken from its state. */
export interface SettledConfig extends ImportConfig {
  readonly dayMode: DayMode;
  readonly layout: Layout;
  readonly format: OutputFormat;
}
