import type { DayRange } from '../../window/day-ranges.js';
import { addDays } from '../../window/days.js';
import type { KeyStatus } from './status.js';
import type { LastRun } from '../storage/versions/current.js';

type StatusPending = KeyStatus['pending'][number];

/** What a pending day waits for, as the text says it (the day itself apart). */
function describeReason(pending: StatusPending): string {
  switch (pending.reason) {
    case 'partly-published': {
      const missing = pending.missingStores ?? 0;
      return `partly published (${missing} store${missing === 1 ? '' : 's'} missing)`;
    }
    case 'not-over':
      return 'imported before it was over';
    case 'asked':
      return 'asked (not judged yet)';
    case 'suspect':
      return `suspect (${pending.correction ? 'a correction of a final day: ' : ''}${describeSuspect(pending)})`;
    default:
      return pending.reason.replace('-', ' ');
  }
}

/** What a held day's judgement found: every value zero, its total, the vendor's batch, its stores. */
function describeSuspect(pending: StatusPending): string {
  const parts: string[] = [];
  if (pending.allZero) parts.push('every value zero');
  else if (pending.median !== undefined) parts.push(`${pending.measure ?? 'its total'} far from the median`);
  if (pending.factor !== undefined) parts.push(`most stores at x${pending.factor} of their usual`);
  if (pending.suspectStores !== undefined) {
    const named = pending.firstStores ?? [];
    const more = pending.suspectStores > named.length ? ` and ${pending.suspectStores - named.length} more` : '';
    parts.push(`${pending.suspectStores} store${pending.suspectStores === 1 ? '' : 's'} outside their range: ${named.join(', ')}${more}`);
  }
  return parts.length === 0 ? `${pending.measure ?? 'its total'} far from the median` : parts.join('; ');
}

/** `2026-10-25..11-24`: the second day without its year when the range stays in one year. */
function describeShortRange([first, last]: DayRange): string {
  if (first === last) return first;
  return `${first}..${first.slice(0, 4) === last.slice(0, 4) ? last.slice(5) : last}`;
}

function list(ranges: readonly DayRange[]): string {
  return ranges.length === 0 ? '-' : ranges.map(describeShortRange).join(', ');
}

/** Consecutive pending days that wait for the same thing read as one range: `2026-10-25..11-24 interrupted`. */
function describePending(pending: readonly StatusPending[]): string {
  const groups: { range: DayRange; what: string }[] = [];
  for (const day of pending) {
    const what = describeReason(day);
    const open = groups.at(-1);
    if (open !== undefined && open.what === what && addDays(open.range[1], 1) === day.day) open.range[1] = day.day;
    else groups.push({ range: [day.day, day.day], what });
  }
  return groups.length === 0 ? '-' : groups.map(({ range, what }) => `${describeShortRange(range)} ${what}`).join(', ');
}

function describeRun(run: LastRun): string {
  const rows = Object.entries(run.rows).map(([metric, count]) => `${metric} ${count}`);
  const requests =
    run.requests === undefined
      ? ''
      : `, requests ${run.requests} (${run.throttled ?? 0} answered 429${run.paceRps === undefined ? '' : `, pace ${run.paceRps}/s`})`;
  return `last run: ${run.time} ${run.command}, exit ${run.exitCode}, rows: ${rows.length === 0 ? 'none' : rows.join(', ')}${requests}`;
}

/** A table with one line per key, then the last run. */
export function formatText(statuses: readonly KeyStatus[], lastRun: LastRun | undefined): string {
  const rows = [
    ['metric', 'first day', 'last complete', 'behind', 'stores', 'gaps', 'given up', 'accepted', 'pending'],
    ...statuses.map((status) => [
      status.key,
      status.firstDay ?? '-',
      status.lastCompleteDay ?? 'none yet',
      status.daysBehind === null ? '-' : String(status.daysBehind),
      status.stores === null ? '-' : String(status.stores),
      list(status.gaps),
      list(status.givenUp),
      list(status.accepted),
      describePending(status.pending),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const table = rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
  return [...table, ...(lastRun ? [describeRun(lastRun)] : [])].join('\n') + '\n';
}

/** The one line `--max-behind` fails with, naming each key behind and why. */
export function behindMessage(behind: readonly KeyStatus[], maxBehind: number | undefined): string {
  const which = behind.map((status) => {
    const days = [
      ...(status.daysBehind === null ? [] : [`${status.daysBehind} day${status.daysBehind === 1 ? '' : 's'} behind`]),
      ...(status.lastCompleteDay === null ? ['no complete day yet'] : []),
      ...(status.gapDays > 0 ? [`gaps ${list(status.gaps)}`] : []),
      ...(status.suspect.length > 0 ? [`suspect ${list(status.suspect)}`] : []),
    ];
    return `${status.key} (${days.join(', ')})`;
  });
  return `behind by more than --max-behind ${maxBehind}, or with gaps: ${which.join('; ')}`;
}

/**
 * How each held (suspect) day settles, one line a range: the next `--catch-up` asks again, and `accept` records it
 * final if its numbers are right. `stateFlags` name the state on the command line (` -o ./data`).
 */
export function settleLines(statuses: readonly KeyStatus[], stateFlags: string): string {
  return statuses
    .flatMap((status) =>
      // One line a range, so that each printed command settles exactly the days it names.
      status.suspect.map(([first, last]) => {
        const held = `held: ${status.key} ${describeShortRange([first, last])} suspect: the next --catch-up asks again`;
        // `accept` settles a metric's days, not a store selection's: those only the vendor's numbers settle.
        if (status.key !== status.metric) return `${held}\n`;
        const window = first === last ? `--date ${first}` : `--from ${first} --to ${last}`;
        return `${held}; if the numbers are right, \`area-metrics accept ${status.metric} ${window}${stateFlags}\` records it as final\n`;
      }),
    )
    .join('');
}
