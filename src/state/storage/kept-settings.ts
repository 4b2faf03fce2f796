import { UsageError } from '../../errors.js';
import type { Layout } from '../../output/layout.js';
import type { DayMode } from '../../window/day-mode.js';
import type { StateFile } from './versions/current.js';

/** The settings a state (and its output) keeps from its first run, as a run states them. */
export interface KeptSettings {
  readonly mode?: DayMode;
  readonly layout?: Layout;
}

/**
 * Each setting a state keeps: its field (absent in every earlier release, which meant the default), its flag, and
 * how a refusal names the state's value. A run with the other value is refused: one output holds one kind of file.
 */
const KEPT = {
  mode: {
    field: 'days',
    absent: 'utc',
    flag: '--days',
    noun: 'day mode',
    holds: (value: string) => `which holds ${value === 'utc' ? 'UTC days (--days utc)' : 'store-local days (--days local)'}`,
  },
  layout: {
    field: 'layout',
    absent: 'flat',
    flag: '--layout',
    noun: 'layout',
    holds: (value: string) =>
      `whose files are laid out ${value === 'flat' ? 'flat (--layout flat)' : 'in hive partitions (--layout hive)'}`,
  },
} as const satisfies Record<
  keyof KeptSettings,
  { field: keyof StateFile; absent: string; flag: string; noun: string; holds: (value: string) => string }
>;

/** Refuses a state that keeps another value of a setting the run states. */
export function refuseOtherSettings(file: StateFile, settings: KeptSettings, path: string): void {
  for (const name of ['mode', 'layout'] as const) {
    const wanted = settings[name];
    const { field, absent, flag, noun, holds } = KEPT[name];
    const kept = file[field] ?? absent;
    if (wanted === undefined || kept === wanted) continue;
    throw new UsageError(
      `${flag} ${wanted} does not match the state ${path}, ${holds(kept)}: one output folder and state keep one ${noun}; ` +
        `use ${flag} ${kept}, or another -o folder and --state for ${flag} ${wanted}`,
    );
  }
}

/**
 * Writes the run's settings into the state with its first change, when they are not the defaults (absent means the
 * default, as every earlier release wrote); says whether it added any.
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
  return added;
}
