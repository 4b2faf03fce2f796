import { FAULTS, type FaultName } from './faults.js';
import type { HeldDay, MetricReplay } from './replay.js';

/** How many held days the text names in full per metric; the JSON names them all. */
const NAMED_DAYS = 20;
const NAMED_STORES = 3;

/** A metric's backtest as `--json` gives it: `held`, and with `--inject` `injected` and `caught`. */
export interface MetricSummary {
  readonly metric: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly nights: number;
  readonly storeDays: number;
  readonly held: readonly {
    readonly day: string;
    readonly nightsLate: number;
    readonly storeCount: number;
    readonly stores: readonly string[];
    readonly why: string;
    readonly injected: boolean;
  }[];
  readonly stillHeld: readonly string[];
  readonly holdRate: { readonly nights: number; readonly storeDays: number };
  readonly injected?: readonly { readonly day: string; readonly fault: FaultName; readonly store: string | null }[];
  readonly caught?: readonly {
    readonly day: string;
    readonly fault: FaultName;
    readonly store: string | null;
    readonly nightsLate: number;
  }[];
}

/** The replay of a metric as its summary: held days with their reasons, the hold rates, and the faults found. */
export function summaryOf(replay: MetricReplay, fault: FaultName | undefined): MetricSummary {
  const nights = replay.days.length;
  // The rates are those of honest data: a day held for a fault injected into it is not a false hold.
  const honest = replay.held.filter((day) => !day.injected);
  const heldStoreDays = honest.reduce((sum, day) => sum + day.storeDays, 0);
  return {
    metric: replay.metric,
    from: replay.days[0] ?? null,
    to: replay.days.at(-1) ?? null,
    nights,
    storeDays: replay.storeDays,
    held: replay.held.map((day) => ({
      day: day.day,
      nightsLate: day.nightsLate,
      storeCount: day.storeDays,
      stores: day.stores,
      why: whyHeld(day),
      injected: day.injected,
    })),
    stillHeld: replay.stillHeld,
    holdRate: { nights: rate(honest.length, nights), storeDays: rate(heldStoreDays, replay.storeDays) },
    ...(fault === undefined
      ? {}
      : {
          injected: replay.injected.map(({ day, fault: name, store }) => ({ day, fault: name, store: store ?? null })),
          caught: replay.caught.map(({ day, fault: name, store, nightsLate }) => ({ day, fault: name, store: store ?? null, nightsLate })),
        }),
  };
}

function rate(part: number, whole: number): number {
  return whole === 0 ? 0 : Number((part / whole).toPrecision(4));
}

/** Why the rule held a day, in the words of the import's warning. */
function whyHeld({ suspicion, stores }: HeldDay): string {
  if (suspicion.batch !== undefined) return `most stores moved together by x${suspicion.batch.factor} (a half day or a partial batch)`;
  if (stores.length > 0) {
    const first = suspicion.stores?.first ?? [];
    const ranges = first
      .slice(0, NAMED_STORES)
      .map(({ store, value, low, high }) => `${store} ${round(value)} (expected ${round(low)}..${round(high)})`)
      .join(', ');
    return `${stores.length} store${stores.length === 1 ? '' : 's'} outside ${stores.length === 1 ? 'its' : 'their'} own range of ${suspicion.measure}: ${ranges}`;
  }
  if (suspicion.allZero === true) return `every value zero (${suspicion.measure})`;
  return `${suspicion.measure} ${suspicion.value}${suspicion.median === undefined ? '' : ` against a median of ${suspicion.median}`}`;
}

function round(value: number): string {
  return Number(value.toPrecision(4)).toString();
}

function percent(share: number): string {
  return `${(share * 100).toFixed(share === 0 ? 0 : 2)}%`;
}

/** The summaries as text: a line per metric, a line per held day (the first few), the faults found. */
export function formatBacktest(summaries: readonly MetricSummary[], fault: FaultName | undefined): string {
  const lines: string[] = [];
  for (const summary of summaries) {
    if (summary.nights === 0) {
      lines.push(`${summary.metric}: no data in this output to replay`);
      continue;
    }
    const honest = summary.held.filter((day) => !day.injected);
    lines.push(
      `${summary.metric}: ${summary.nights} nights ${summary.from}..${summary.to}, ${summary.storeDays} store-days; ` +
        `would hold ${honest.length} day${honest.length === 1 ? '' : 's'} (${percent(summary.holdRate.nights)} of nights, ` +
        `${percent(summary.holdRate.storeDays)} of store-days)`,
    );
    for (const day of honest.slice(0, NAMED_DAYS)) {
      const late = day.nightsLate === 0 ? '' : ` (${day.nightsLate} night${day.nightsLate === 1 ? '' : 's'} after it came)`;
      lines.push(`  ${day.day} held${late}: ${day.why}`);
    }
    if (honest.length > NAMED_DAYS) lines.push(`  ... and ${honest.length - NAMED_DAYS} more (--json lists them all)`);
    if (fault !== undefined && summary.injected !== undefined && summary.caught !== undefined) {
      const late = summary.caught.filter((each) => each.nightsLate > 0).length;
      const missed = summary.injected.filter((each) => !summary.caught!.some((caught) => caught.day === each.day));
      lines.push(
        `  injected ${FAULTS[fault].words} on ${summary.injected.length} day${summary.injected.length === 1 ? '' : 's'}: ` +
          `held ${summary.caught.length} (${summary.caught.length - late} the night it came, ${late} later), missed ${missed.length}`,
      );
      for (const each of missed.slice(0, NAMED_DAYS)) lines.push(`  missed ${each.day}${each.store === null ? '' : ` ${each.store}`}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
