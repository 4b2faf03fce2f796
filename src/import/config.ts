import type { DestinationSpec } from '../destination/spec.js';
import type { ClientCredentials } from '../fetch/basic-auth.js';
import type { LineageSettings } from '../lineage/settings.js';
import type { LogFormat, LogLevel } from '../log/logger.js';
import type { OutputFormat, OutputShape } from '../output/format.js';
import type { Layout } from '../output/layout.js';
import type { CatchUpRequest } from '../state/judgement/catch-up.js';
import type { SuspectMode } from '../state/judgement/suspect.js';
import type { DayMode } from '../window/day-mode.js';
import type { WindowRequest } from '../window/requested-days.js';

/** How the vendor's API is asked: where, how much a page, how fast and how patiently. */
export interface ApiSection {
  readonly baseUrl: URL;
  readonly pageSize: number;
  /** Units fetched at once. */
  readonly concurrency: number;
  /** `--max-rps`: the pace's cap, requests a second. */
  readonly maxRps?: number;
  /** `--max-wait`: the cap on every wait the vendor asks for. */
  readonly maxWaitMs: number;
  /** `--max-results`: a unit's bound, from which its pages and a page's bytes are bounded. */
  readonly maxResults: number;
  readonly retries: number;
  readonly timeoutMs: number;
}

/** The API section of a run that sends requests: it has credentials. */
export interface ApiAccess extends ApiSection {
  readonly credentials: ClientCredentials;
  /** The secret came as `--client-secret`, visible to every user of the machine: the run warns once. */
  readonly secretOnCommandLine: boolean;
}

/** Which days and stores a run imports. */
export interface WindowSection {
  /** Named days, the default day, or `--catch-up` from the state's coverage. */
  readonly days: WindowRequest | CatchUpRequest;
  /** UTC days or store-local calendar days; absent: the state's (UTC for a new one). */
  readonly dayMode?: DayMode;
  readonly storeCodes: readonly string[];
}

/** How the days a run imports are judged. */
export interface JudgementSection {
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly onSuspect: SuspectMode;
}

/** Where and how a run writes: the destination, its files, its state and its records. */
export interface OutputSection {
  readonly destination: DestinationSpec;
  /** How files are named under a folder or bucket prefix; stdout has none. Absent: the state's (flat for a new one). */
  readonly layout?: Layout;
  /** Absent: the state's (CSV for a new one); always given for stdout, which keeps none. */
  readonly format?: OutputFormat;
  readonly shape: OutputShape;
  readonly onInvalid: 'fail' | 'skip';
  /** `--state`: where the state is kept instead of beside the data, a file path or an `s3://bucket/key` URL. */
  readonly stateLocation?: string;
  readonly s3ForcePathStyle: boolean;
  /** Which of the settings an output keeps came from an env var, not a flag: a refusal names the variable. */
  readonly settingsFromEnv: readonly ('mode' | 'layout' | 'format')[];
  /** Where and as whom the run posts its OpenLineage events; absent: none. */
  readonly lineage?: LineageSettings;
}

export interface LogSection {
  readonly level: LogLevel;
  readonly format: LogFormat;
}

interface Sections {
  readonly window: WindowSection;
  readonly judgement: JudgementSection;
  readonly output: OutputSection;
  readonly log: LogSection;
}

/** A run that imports: it has credentials, by type. */
export interface RunConfig extends Sections {
  readonly dryRun: false;
  readonly api: ApiAccess;
}

/** `--dry-run`: prints the first request of each unit and sends none, so it has no credentials at all. */
export interface DryRunConfig extends Sections {
  readonly dryRun: true;
  readonly api: ApiSection;
}

/** Everything an import needs, checked before any request (the import commands resolve it from their options). */
export type ImportConfig = RunConfig | DryRunConfig;

/** The window with its day mode settled: stated by the run, or taken from its state. */
export interface SettledWindow extends WindowSection {
  readonly dayMode: DayMode;
}

/** The output with the settings it keeps settled: stated by the run, or taken from its state. */
export interface SettledOutput extends OutputSection {
  readonly layout: Layout;
  readonly format: OutputFormat;
}

/** A run's config with the settings an output keeps settled (a dry run plans from them and needs nothing more). */
export interface SettledRunConfig extends RunConfig {
  readonly window: SettledWindow;
  readonly output: SettledOutput;
}
