import { exitCodeFor, messageOf } from '../errors.js';
import type { ImportProgress } from '../log/progress.js';
import { describeValue, describeViolation } from '../metrics/check.js';
import { describeRequests, type PacerStats } from '../fetch/pacer.js';
import type { UnitOutcome } from './pipeline.js';
import { unitLabel } from '../metrics/unit.js';
import { describeDays } from '../window/day-ranges.js';
import type { CalendarDay } from '../window/days.js';
import { VERSION } from '../version.js';
import type { DayNote, MissingStores } from './day-completion.js';
import { describeSuspicion } from '../state/judgement/suspect.js';
import type { MetricDays, PlanWarning } from './plan.js';
import { runFailure, type ImportSummary, type UnitReport } from './run.js';
import type { RunDescription } from './invocation.js';
import { leftUnits } from './stop.js';

type NotOver = Extract<DayNote, { kind: 'not-over' }>;
type HeldAgain = Extract<DayNote, { kind: 'suspect' }>;

/** How many store codes a warning names before it says "...". */
const NAMED_STORES = 5;

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function namedStores(codes: readonly string[]): string {
  return `${codes.slice(0, NAMED_STORES).join(', ')}${codes.length > NAMED_STORES ? ', ...' : ''}`;
}

function describeMissing({ codes, expected, askedFor }: MissingStores): string {
  const named = namedStores(codes);
  return `${codes.length} of ${expected} stores${askedFor ? ' asked for' : ' of the latest complete day'} missing (${named})`;
}

/**
 * Every line an import logs, in one place and in an order that reads top to bottom: the run line, the `--max-days`
 * cuts, each unit's line (or its failure) with the warnings of its records and of its day, and the summary. A day that
 * is not over is said once per run for all the metrics it holds, just before the summary.
 */
export class ImportReport implements UnitReport {
  private notOver: NotOver[] = [];
  private heldAgain: HeldAgain[] = [];

  constructor(
    private readonly progress: ImportProgress,
    private readonly run: RunDescription,
    /** Told of each failed unit's exit code as soon as it is reported (a closed stdout ends the process with it). */
    private readonly failed: (exitCode: number) => void,
    /** The run's requests, 429s and pace, for the unit and summary lines. */
    private readonly pacer: { stats(): PacerStats },
  ) {}

  /** The first line of every run: which run this is, so a log appended to night after night can be read by night. */
  started(plan: readonly MetricDays[], cuts: readonly PlanWarning[]): void {
    const described = plan.map(
      ({ metric, days }) => `${metric} ${days.length === 0 ? 'none' : `${describeDays(days)} (${plural(days.length, 'day')})`}`,
    );
    this.progress.logger.info(`area-metrics ${VERSION} ${this.run.invocation}: ${described.join(', ')}; output ${this.run.output}`, {
      version: VERSION,
      command: this.run.command,
      planned: Object.fromEntries(plan.map(({ metric, days }) => [metric, days.length])),
      output: this.run.output,
    });
    if (this.run.optionWarning !== undefined) this.progress.logger.warn(this.run.optionWarning);
    for (const cut of cuts) this.progress.logger.warn(cut.message, cut.fields);
  }

  removedTempFile(path: string, pid: number, reason: 'gone' | 'old'): void {
    this.progress.logger.info(
      `removed ${path}, a temp file left by process ${pid}, ${reason === 'gone' ? 'which is gone' : 'more than an hour old'}`,
    );
  }

  nothingToImport(): void {
    this.progress.finish(
      'nothing to import: no day is pending, and every day through yesterday is complete, accepted or given up',
      { units: 0 },
      true,
    );
  }

  unit(outcome: UnitOutcome): void {
    const label = unitLabel(outcome.unit);
    if (!outcome.ok) {
      const exitCode = exitCodeFor(outcome.error);
      this.progress.logger.error(failureLine(label, outcome.error), { unit: label, exit_code: exitCode });
      this.failed(exitCode);
      return;
    }
    const { data } = outcome;
    // One line a unit, whatever the count: a half day warns of every store's result; the first few say what it is.
    if (data.warnings.length > 0) {
      const first = data.warnings.slice(0, NAMED_WARNINGS).join('; ');
      const count = data.warnings.length;
      this.warn(
        count === 1
          ? `${label}: ${first}`
          : `${label}: ${count} results warned of: ${first}${count > NAMED_WARNINGS ? `; and ${count - NAMED_WARNINGS} more` : ''}`,
        { unit: label, results: count },
      );
    }
    for (const record of data.rejected) {
      // Names the record and its value like the --on-invalid fail line: with -o - this line is all that is kept.
      const { store_code: storeCode } = (record.record ?? {}) as { store_code?: unknown };
      this.progress.logger.warn(`${label}: rejected record (store_code ${describeValue(storeCode)}): ${describeViolation(record)}`);
    }
    const kept = outcome.path !== undefined && !outcome.changed ? ' (unchanged)' : '';
    this.progress.unitDone(
      `${label}: ${data.rowCount} rows from ${data.count} results in ${data.pages} page(s)` +
        `${data.dropped ? ` (${data.dropped} of the neighbouring local days left out)` : ''}` +
        `${data.rejected.length ? `, ${data.rejected.length} rejected` : ''} -> ${outcome.destination}${kept}`,
      {
        unit: label,
        rows: data.rowCount,
        results: data.count,
        pages: data.pages,
        rejected: data.rejected.length,
        warnings: data.warnings.length,
        destination: outcome.destination,
        ...(outcome.path === undefined ? {} : { path: outcome.path }),
        changed: outcome.changed,
        requests: data.requests,
        throttled: data.throttled,
        ...paceField(this.pacer.stats()),
      },
    );
  }

  days(notes: readonly DayNote[]): void {
    for (const note of notes) {
      if (note.kind === 'not-over') this.notOver.push(note);
      else if (note.kind === 'suspect' && note.again) this.heldAgain.push(note);
      else if (note.kind === 'new-level') this.newLevel(note);
      else if (note.kind === 'settled') this.settled(note);
      else this.warn(`${note.metric} ${note.day}: ${this.describeNote(note)}`, { metric: note.metric, day: note.day, note: note.kind });
    }
  }

  /**
   * Days held as suspect before this run and still held: one line per metric with their count, since each was said
   * in full the night it was first held.
   */
  private daysHeldAgain(): void {
    const groups = new Map<string, CalendarDay[]>();
    for (const note of this.heldAgain) groups.set(note.metric, [...(groups.get(note.metric) ?? []), note.day]);
    this.heldAgain = [];
    for (const [metric, days] of groups) {
      const named = days.slice(0, 3).join(', ');
      const more = days.length > 3 ? ` and ${days.length - 3} more` : '';
      this.warn(
        `${metric}: ${plural(days.length, 'day')} still held as suspect (${named}${more}): fetched again, the numbers still look wrong; ` +
          `\`area-metrics status\` names their stores, \`area-metrics accept\` settles a day whose numbers are right`,
        { metric, days: days.length, note: 'suspect-again' },
      );
    }
  }

  /** The days not over, one line for each day (and the metrics it holds); before the summary, or when a run stops. */
  daysNotOver(): void {
    this.daysHeldAgain();
    const groups = new Map<string, NotOver[]>();
    for (const note of this.notOver) {
      const key = `${note.day} ${note.until} ${note.results > 0}`;
      groups.set(key, [...(groups.get(key) ?? []), note]);
    }
    this.notOver = [];
    for (const [first, ...rest] of groups.values()) {
      if (first === undefined) continue;
      const metrics = [first, ...rest].map((note) => note.metric);
      const what =
        first.results > 0
          ? 'written with the figures so far, which may still change, and left pending'
          : 'nothing published yet, nothing written, left pending';
      this.warn(
        `${metrics.join(', ')} ${first.day}: not over until ${first.until}, when the last store's local day in it ends; ${what}: ${this.next('imports it again')}`,
        {
          metrics,
          day: first.day,
          until: first.until,
          note: 'not-over',
        },
      );
    }
  }

  /** The last line: what the run did; an error line when a unit failed. */
  finished(summary: ImportSummary): void {
    this.daysNotOver();
    const first = summary.failures[0];
    const requests = this.pacer.stats();
    const { tally } = summary;
    const warnings = this.progress.warnings();
    const notTried = summary.notTried ? `; ${summary.notTried} ${leftUnits(summary).summary}` : '';
    const line =
      `imported ${tally.succeeded} of ${summary.units} units, ${tally.rows} rows` +
      `${tally.unchanged ? `, ${tally.unchanged} unchanged` : ''}` +
      `${tally.rejected ? `, ${tally.rejected} rejected records` : ''}${warnings ? `, ${plural(warnings, 'warning')}` : ''}` +
      ` in ${summary.seconds.toFixed(1)} s, ${describeRequests(requests)}` +
      (first ? `; ${summary.failures.length} failed, first: ${unitLabel(first.unit)}` : '') +
      notTried;
    const seconds = Number(summary.seconds.toFixed(1));
    const { paceRps: _paceRps, ...counts } = requests;
    const fieldsOut = {
      units: summary.units,
      succeeded: tally.succeeded,
      unchanged: tally.unchanged,
      notTried: summary.notTried,
      ...(summary.stoppedBy === undefined ? {} : { stoppedBy: summary.stoppedBy }),
      rows: tally.rows,
      rejected: tally.rejected,
      seconds,
      ...(summary.stopCause === undefined ? {} : { stopCause: summary.stopCause.message }),
      warnings,
      rows_by_metric: tally.rowsByMetric(),
      failed: summary.failures.length,
      ...counts,
      ...paceField(requests),
    };
    this.progress.finish(line, fieldsOut, runFailure(summary) === undefined);
  }

  /** A store's figure out of its range that the days after it confirm: its new level, said once, not a warning. */
  private newLevel(note: Extract<DayNote, { kind: 'new-level' }>): void {
    this.progress.logger.info(
      `${note.metric} ${note.day}: ${plural(note.stores.length, 'store')} (${namedStores(note.stores)}) at a new level from this day on, as the days after it confirm; recorded complete`,
      { metric: note.metric, day: note.day, note: note.kind, stores: note.stores.length },
    );
  }

  /** A day held as suspect whose numbers the vendor has since made plausible: said once, not a warning. */
  private settled(note: Extract<DayNote, { kind: 'settled' }>): void {
    this.progress.logger.info(
      `${note.metric} ${note.day}: held as suspect${note.correction ? ' (a correction)' : ''} before; fetched again, its numbers now look right: recorded complete`,
      { metric: note.metric, day: note.day, note: note.kind },
    );
  }

  private describeNote(note: Exclude<DayNote, NotOver | { kind: 'new-level' } | { kind: 'settled' }>): string {
    switch (note.kind) {
      case 'kept':
        return 'no results on this re-import; the file of the earlier import is kept';
      case 'not-published':
        return `no results: the vendor has not published this day yet; nothing written, not recorded complete; ${this.next('asks again')}`;
      case 'given-up': {
        const days = `${note.metric} --date ${note.day}${this.run.stateFlags}`;
        return (
          `still not published ${note.giveUpDays} days after its window ended (--give-up-days ${note.giveUpDays}): given up, ` +
          `--catch-up no longer asks for it; \`area-metrics accept ${days}\` records it as final, \`area-metrics reopen ${days}\` asks for it again`
        );
      }
      case 'partly-published':
        return `partly published: ${describeMissing(note.missing)}; file written with ${plural(note.stores, 'store')}, not recorded complete; ${this.next('asks again')}`;
      case 'complete-anyway':
        return `${describeMissing(note.missing)}; recorded complete anyway: the day is at least --settle-days ${note.settleDays} days old`;
      case 'suspect':
        if (note.held && note.correction)
          return (
            `suspect: ${describeSuspicion(note.suspicion)}; a correction of a final day: file rewritten, provisional again and held ` +
            `(--on-suspect hold): the next --catch-up asks again, \`area-metrics accept ${note.metric} --date ${note.day}${this.run.stateFlags}\` ` +
            'records it as final if its numbers are right'
          );
        return note.held
          ? `suspect: ${describeSuspicion(note.suspicion)}; file written, not recorded complete (--on-suspect hold): ${this.next('asks again')}, ` +
              `\`area-metrics accept ${note.metric} --date ${note.day}${this.run.stateFlags}\` records it as final if its numbers are right`
          : `suspect: ${describeSuspicion(note.suspicion)}; recorded complete anyway (--on-suspect warn)`;
    }
  }

  /** What comes of a day left pending: the next --catch-up, or, with no state to record it, what one would do. */
  private next(does: string): string {
    return this.run.stateful
      ? `the next --catch-up ${does}`
      : `no state records it (-o - without --state): with --state <file>, the next --catch-up ${does}`;
  }

  private warn(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.progress.logger.warn(message, fields);
  }
}

/** How many of a unit's record warnings its line quotes; the rest are counted. */
const NAMED_WARNINGS = 3;

/** The pace the run is at, for a JSON line (none while nothing paces it). */
function paceField(stats: PacerStats): { pace_rps?: number } {
  return stats.paceRps === undefined ? {} : { pace_rps: stats.paceRps };
}

/**
 * The one stderr line of a failed unit always names the unit: errors raised per request (HTTP status,
 * network, malformed body) only know the URL, and text logs do not print the `unit` field.
 */
function failureLine(label: string, error: unknown): string {
  const message = messageOf(error);
  // A request's errors start with the unit's label and page (`traffic 2026-11-20 page 2: ...`).
  return message.startsWith(`${label}:`) || message.startsWith(`${label} page `) ? message : `${label}: ${message}`;
}
