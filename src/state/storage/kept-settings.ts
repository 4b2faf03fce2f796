import { UsageError } from '../../errors.js';
import type { OutputFormat } from '../../output/format.js';
import type { Layout } from '../../output/layout.js';
import type { DayMode } from '../../window/day-mode.js';
import type { StateFile } from './versions/current.js';

/** The settings a state (and its output) keeps from its first run, as a run states them (absent: not stated). */
export interface KeptSettings {
  readonly mode?: DayMode;
  readonly layout?: Layout;
  readonly format?: OutputFormat;
}

/** What a new state records when the run states no format (the files' default), and which settings an env var stated. */
export interface KeptDefaults {
  readonly defaultFormat?: OutputFormat;
  /** Said by their variable in a refusal: the fix is in the environment (`/etc/area-metrics/env`), not the command. */
  readonly fromEnv?: readonly (keyof KeptSettings)[];
}

const NAMES = ['mode', 'layout', 'format'] as const;

/**
 * Each setting a state keeps: its field, what its absence meant (`mode` and `layout` were absent in every earlier
 * release, which meant the default; no earlier release kept a format, so an absent one is unknown), its flag, and
 * how a refusal names the state's value. A run with another value is refused: one output holds one kind of file.
 */
const KEPT = {
  mode: {
    field: 'days',
    absent: 'utc',
    flag: '--days',
    env: 'AREA_METRICS_DAYS',
    noun: 'day mode',
    holds: (value: string) => `which holds ${value === 'utc' ? 'UTC days (--days utc)' : 'store-local days (--days local)'}`,
  },
  layout: {
    field: 'layout',
    absent: 'flat',
    flag: '--layout',
    env: 'AREA_METRICS_LAYOUT',
    noun: 'layout',
    holds: (value: string) =>
      `whose files are laid out ${value === 'flat' ? 'flat (--layout flat)' : 'in hive partitions (--layout hive)'}`,
  },
  format: {
    field: 'format',
    absent: undefined,
    flag: '-f',
    env: 'AREA_METRICS_FORMAT',
    noun: 'file format',
    holds: (value: string) => `whose files are ${value === 'ndjson' ? 'NDJSON' : value === 'csv' ? 'CSV' : 'Parquet'} (-f ${value})`,
  },
} as const satisfies Record<
  keyof KeptSettings,
  { field: keyof StateFile; absent: string | undefined; flag: string; env: string; noun: string; holds: (value: string) => string }
>;

/** The value a state keeps for each setting; `format` is absent when no run has recorded one. */
export function keptIn(file: StateFile): KeptSettings {
  return { mode: file.days ?? 'utc', layout: file.layout ?? 'flat', ...(file.format === undefined ? {} : { format: file.format }) };
}

/** Refuses a state that keeps another value of a setting the run states (by its flag, or its env var). */
export function refuseOtherSettings(file: StateFile, settings: KeptSettings & KeptDefaults, path: string): void {
  for (const name of NAMES) {
    const wanted = settings[name];
    const { field, absent, flag, env, noun, holds } = KEPT[name];
    const kept = file[field] ?? absent;
    if (wanted === undefined || kept === undefined || kept === wanted) continue;
    if (settings.fromEnv?.includes(name)) {
      throw new UsageError(
        `${env}=${wanted} does not match the state ${path}, ${holds(kept)}: one output folder and state keep one ${noun}; ` +
          `unset ${env} (or set it to ${kept}), or start a new folder: another -o folder and --state for ${flag} ${wanted}`,
      );
    }
    throw new UsageError(
      `${flag} ${wanted} does not match the state ${path}, ${holds(kept)}: one output folder and state keep one ${noun}; ` +
        `leave ${flag} out (or use ${flag} ${kept}), or start a new folder: another -o folder and --state for ${flag} ${wanted}`,
    );
  }
}

/**
 * The settings a run takes: each one it states, else the state's (`file`, undefined for a new state). A new state
 * records the default format too, so that the next run without -f writes the same kind of file.
 */
export function settleSettings(file: StateFile | undefined, given: KeptSettings & KeptDefaults): KeptSettings {
  const kept = file === undefined ? {} : keptIn(file);
  const format = given.format ?? kept.format ?? (file === undefined ? given.defaultFormat : undefined);
  return {
    ...((given.mode ?? kept.mode) ? { mode: given.mode ?? kept.mode } : {}),
    ...((given.layout ?? kept.layout) ? { layout: given.layout ?? kept.layout } : {}),
    ...(format === undefined ? {} : { format }),
  };
}

/**
 * Writes the run's settings into the state with its first change, when they are not the defaults (absent means the
 * default, as every earlier release wrote; a format is always written, its absence being unknown); says whether it
 * added any.
 */
export function addSettings(file: StateFile, settings: KeptSettings): boolean {
  let added = false;
  if (settings.mode === 'local' && file.days !== 'local') {
    file.days = 'local';
    added = true;
  }
  if (settings.layout === 'hive' && file.layout !== 'hive') {
    file.layout = 'hive';
    added = true;
  }
  if (settings.format !== undefined && file.format === undefined) {
    file.format = settings.format;
    added = true;
  }
  return added;
}
