import { capabilitiesOf } from '../destination/open.js';
import type { OutputSection, WindowSection } from './config.js';

/** How a run is described in its first line and in commands a warning suggests. */
export interface RunDescription {
  /** The command's name, e.g. `all`. */
  readonly command: string;
  /** The command line as given, e.g. `all --catch-up --max-days 31`. */
  readonly invocation: string;
  readonly output: string;
  /** The flags that name the run's state (` -o ./data`), so that a suggested command works as printed. */
  readonly stateFlags: string;
  /** Whether a state records the run's days (none for stdout without `--state`): what a warning says comes next. */
  readonly stateful: boolean;
  /** A warning the run's options call for (a secret given as a flag), said once after the run line. */
  readonly optionWarning?: string;
}

/** The window as the command line gave it, for the run's first line and the state's last run. */
function describeWindow({ days: window }: WindowSection): string {
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
function describeRun(window: WindowSection): string {
  if (window.dayMode !== 'local') return describeWindow(window);
  return `--days local ${window.days.kind === 'default' ? '(the latest local day over everywhere)' : describeWindow(window)}`;
}

/** A word as a shell reads it: as it is when it is plain, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The flags that name this run's state on another command line (` -o ./data`), so a suggested command works as printed. */
function stateFlags(config: OutputSection): string {
  const { output } = config.destination;
  const flags = [
    ...(output === undefined ? [] : ['-o', shellWord(output)]),
    ...(config.stateLocation === undefined ? [] : ['--state', shellWord(config.stateLocation)]),
    ...(config.s3ForcePathStyle ? ['--s3-force-path-style'] : []),
  ];
  return flags.map((flag) => ` ${flag}`).join('');
}

/** The run as every record of it names it, built once: the run line, the manifest, lineage and the state's last run. */
export function describeImport(
  command: string,
  { window, output }: { readonly window: WindowSection; readonly output: OutputSection },
  optionWarning?: string,
): RunDescription {
  return {
    command,
    invocation: `${command} ${describeRun(window)}`,
    output: output.destination.name,
    stateFlags: stateFlags(output),
    stateful: capabilitiesOf(output.destination).state !== 'named-only' || output.stateLocation !== undefined,
    ...(optionWarning === undefined ? {} : { optionWarning }),
  };
}
