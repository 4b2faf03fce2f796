import { describe, expect, it } from 'vitest';
import type { DayProfile } from '../../../src/state/judgement/day-profile.js';
import { storeFigures, type StoreFigures } from '../../../src/state/judgement/store-figures.js';
import { judgeDay, type DayFigures, type DayRules, type StateView, type Verdict } from '../../../src/state/judgement/verdict.js';
import type { PendingDay } from '../../../src/state/storage/versions/current.js';
import { addDays, type CalendarDay } from '../../../src/window/days.js';

/** A Sunday, judged on the Wednesday after it: over, 3 days old (`--settle-days 3`), far from giving up. */
const DAY = '2026-11-29';
const NOW = new Date('2026-12-02T12:00:00Z');
const RULES: DayRules = { storeCodes: [], settleDays: 3, giveUpDays: 14, now: NOW, mode: 'utc', onSuspect: 'hold' };
const PLACE = { key: 'traffic', metric: 'traffic', day: DAY };

/** Each store's figure of a day. */
type Stores = Readonly<Record<string, number>>;

/** What the state knows, as a table: each day's standing, profile and store figures. */
interface Known {
  readonly complete?: readonly CalendarDay[];
  readonly accepted?: readonly CalendarDay[];
  readonly givenUp?: readonly CalendarDay[];
  readonly pending?: Readonly<Record<CalendarDay, PendingDay['reason']>>;
  /** Store figures by day; `held` days (judged suspect) are recorded but judge nothing. */
  readonly figures?: Readonly<Record<CalendarDay, Stores>>;
  readonly held?: readonly CalendarDay[];
  /** Profiles beyond those the figures make (a held correction keeps the one it was final with). */
  readonly profiles?: Readonly<Record<CalendarDay, DayProfile>>;
  readonly storeCodes?: readonly string[];
}

function figuresOf(stores: Stores): StoreFigures {
  const codes = Object.keys(stores).sort();
  return storeFigures(codes, Float64Array.from(codes.map((code) => stores[code]!)));
}

function profileOf(stores: Stores): DayProfile {
  const values = Object.values(stores);
  return [values.length, values.length, values.length * 2, values.reduce((sum, value) => sum + value, 0)];
}

/** The state as `judgeDay` reads it, from the table: no file. */
function view(known: Known): StateView {
  const final = new Set([...(known.complete ?? []), ...(known.accepted ?? [])]);
  const complete = new Set(known.complete ?? []);
  const held = new Set(known.held ?? []);
  const figures = new Map(Object.entries(known.figures ?? {}).map(([day, stores]) => [day, figuresOf(stores)]));
  const profiles = new Map<CalendarDay, DayProfile>(Object.entries(known.profiles ?? {}));
  for (const [day, stores] of Object.entries(known.figures ?? {}))
    if (complete.has(day) && !profiles.has(day)) profiles.set(day, profileOf(stores));
  return {
    isFinal: (_key, day) => final.has(day),
    isGivenUp: (_key, day) => (known.givenUp ?? []).includes(day),
    pendingReason: (_key, day) => known.pending?.[day],
    storeCodes: () => known.storeCodes,
    completeProfiles: () => new Map([...profiles].filter(([day]) => complete.has(day))),
    profileOf: (_key, day) => profiles.get(day),
    storeHistory: () => (day) => (final.has(day) && !held.has(day) ? figures.get(day) : undefined),
    recordedFigures: () => (day) => figures.get(day),
    foundStores: () => new Set(),
  };
}

/** The day's figures as the import adds them up: one result and two rows a store. */
function day(stores: Stores, options: { failed?: boolean } = {}): DayFigures {
  const figures = figuresOf(stores);
  const profile = profileOf(stores);
  return {
    failed: options.failed ?? false,
    results: profile[0],
    stores: figures.codes,
    profile,
    measure: 'sum of visitors',
    allZero: profile[0] > 0 && Object.values(stores).every((value) => value === 0),
    storeCodes: figures.codes,
    storeValues: figures.values,
  };
}

const OPEN = { S1: 100, S2: 120, S3: 90 } as const;

type Level = (store: string, day: CalendarDay) => number;
const open: Level = (store) => OPEN[store as keyof typeof OPEN];

/** Complete days DAY+from..DAY+to (DAY itself left out), each store (`stores`) at `level(store, day)`. */
function around(from: number, to: number, level: Level = open, stores: readonly string[] = Object.keys(OPEN)) {
  const days = Array.from({ length: to - from + 1 }, (_, index) => from + index)
    .filter((offset) => offset !== 0)
    .map((offset) => addDays(DAY, offset));
  const figures = Object.fromEntries(days.map((each) => [each, Object.fromEntries(stores.map((store) => [store, level(store, each)]))]));
  return { complete: days, figures, storeCodes: stores };
}

/** `weeks` weeks of complete days before DAY. */
const history = (weeks: number, level: Level = open) => around(-7 * weeks, -1, level);

/** Sundays are DAY's weekday. */
const isSunday = (each: CalendarDay): boolean => new Date(`${each}T00:00:00Z`).getUTCDay() === 0;
/** S3 closed on Sundays, the others open every day. */
const closedSundays: Level = (store, each) => (store === 'S3' && isSunday(each) ? 0 : open(store, each));

const kind = (verdict: Verdict) => ({ outcome: verdict.outcome.kind, notes: verdict.notes.map((note) => note.kind) });

interface Row {
  readonly name: string;
  readonly known: Known;
  readonly figures: DayFigures;
  readonly rules?: Partial<DayRules>;
  readonly outcome: Verdict['outcome']['kind'];
  readonly reason?: PendingDay['reason'];
  readonly notes: readonly string[];
  readonly correction?: true;
}

const ROWS: readonly Row[] = [
  {
    name: 'a final day fetched again unchanged is kept',
    known: { ...history(4), complete: [DAY, ...history(4).complete], figures: { ...history(4).figures, [DAY]: OPEN } },
    figures: day(OPEN),
    outcome: 'kept',
    notes: [],
  },
  {
    name: 'a final day fetched again with no results is kept, said',
    known: { complete: [DAY] },
    figures: day({}),
    outcome: 'kept',
    notes: ['kept'],
  },
  {
    name: 'a final day whose unit failed is kept',
    known: { complete: [DAY] },
    figures: day(OPEN, { failed: true }),
    outcome: 'kept',
    notes: [],
  },
  {
    name: 'an accepted day fetched again changed stays accepted',
    known: { accepted: [DAY] },
    figures: day({ S1: 0 }),
    outcome: 'kept',
    notes: [],
  },
  {
    name: 'a failed unit leaves the day pending',
    known: {},
    figures: day(OPEN, { failed: true }),
    outcome: 'pending',
    reason: 'failed',
    notes: [],
  },
  {
    name: 'a failed unit leaves a given-up day given up',
    known: { givenUp: [DAY] },
    figures: day(OPEN, { failed: true }),
    outcome: 'kept',
    notes: [],
  },
  {
    name: 'a day not over is pending, said with its end',
    known: {},
    figures: day(OPEN),
    rules: { now: new Date('2026-11-30T12:00:00Z') },
    outcome: 'pending',
    reason: 'not-over',
    notes: ['not-over'],
  },
  {
    name: 'no results yet is pending not-published',
    known: {},
    figures: day({}),
    outcome: 'pending',
    reason: 'not-published',
    notes: ['not-published'],
  },
  {
    name: 'no results --give-up-days after is given up',
    known: {},
    figures: day({}),
    rules: { giveUpDays: 2 },
    outcome: 'given-up',
    notes: ['given-up'],
  },
  { name: 'no results on a given-up day keeps it', known: { givenUp: [DAY] }, figures: day({}), outcome: 'kept', notes: [] },
  {
    name: 'a store missing on a young day is partly published',
    known: { storeCodes: ['S1', 'S2', 'S3', 'S4'] },
    figures: day(OPEN),
    rules: { settleDays: 5 },
    outcome: 'pending',
    reason: 'partly-published',
    notes: ['partly-published'],
  },
  {
    name: 'a store missing on a settled day is complete anyway',
    known: { storeCodes: ['S1', 'S2', 'S3', 'S4'] },
    figures: day(OPEN),
    outcome: 'complete',
    notes: ['complete-anyway'],
  },
  { name: 'a plausible day is complete, silently', known: history(8), figures: day(OPEN), outcome: 'complete', notes: [] },
  {
    name: 'a store at zero where it is open is held',
    known: history(8),
    figures: day({ ...OPEN, S2: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: '--on-suspect warn records it complete, with the warning',
    known: history(8),
    figures: day({ ...OPEN, S2: 0 }),
    rules: { onSuspect: 'warn' },
    outcome: 'complete',
    notes: ['suspect'],
  },
  {
    name: '--on-suspect off does not judge',
    known: history(8),
    figures: day({ ...OPEN, S2: 0 }),
    rules: { onSuspect: 'off' },
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'a day held before and still suspect is held again',
    known: { ...history(8), pending: { [DAY]: 'suspect' } },
    figures: day({ ...OPEN, S2: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: 'a day held before that the vendor fixed is complete, said',
    known: { ...history(8), pending: { [DAY]: 'suspect' } },
    figures: day(OPEN),
    outcome: 'complete',
    notes: ['settled'],
  },
  {
    name: 'every value zero with no history is held',
    known: {},
    figures: day({ S1: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: 'a plausible correction of a final day is complete with its new figures',
    known: { ...history(8), complete: [DAY, ...history(8).complete], figures: { ...history(8).figures, [DAY]: OPEN } },
    figures: day({ ...OPEN, S1: 110 }),
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'a correction that zeroes a store is held, as a correction',
    known: { ...history(8), complete: [DAY, ...history(8).complete], figures: { ...history(8).figures, [DAY]: OPEN } },
    figures: day({ ...OPEN, S1: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
    correction: true,
  },
  {
    name: 'a held correction the vendor reverted is complete, said',
    known: { ...history(8), pending: { [DAY]: 'suspect' }, profiles: { [DAY]: profileOf(OPEN) } },
    figures: day(OPEN),
    outcome: 'complete',
    notes: ['settled'],
    correction: true,
  },
  {
    name: 'a reopened final day whose new numbers look wrong is held, as a correction',
    known: { ...history(8), pending: { [DAY]: 'reopened' }, profiles: { [DAY]: profileOf(OPEN) } },
    figures: day({ ...OPEN, S1: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
    correction: true,
  },
  {
    name: 'a reopened final day fetched again with its numbers as they were is complete, silently',
    known: { ...history(8), pending: { [DAY]: 'reopened' }, profiles: { [DAY]: profileOf(OPEN) } },
    figures: day(OPEN),
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'a store at zero on its closing day (its Sundays zero, its other days open) is at its normal',
    known: history(2, closedSundays),
    figures: day({ ...OPEN, S3: 0 }),
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'its first closed Sunday, its Sundays before open, is held',
    known: history(2),
    figures: day({ ...OPEN, S3: 0 }),
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: 'a Sunday held before counts as its rhythm: the next Sunday closed is not held',
    known: {
      ...history(2, closedSundays),
      held: [addDays(DAY, -7)],
      complete: history(2).complete.filter((each) => each !== addDays(DAY, -7)),
    },
    figures: day({ ...OPEN, S3: 0 }),
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'a held Sunday judged again, the store dark every day since: closed for good, not a closing day, still held',
    known: { pending: { [DAY]: 'suspect' }, ...around(-14, 14, (store, each) => (store === 'S3' && each > DAY ? 0 : open(store, each))) },
    figures: day({ ...OPEN, S3: 0 }),
    rules: { now: new Date('2026-12-20T12:00:00Z') },
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: 'one store (--store) zero on its closing day: the whole key is at its normal',
    known: around(-14, -1, closedSundays, ['S3']),
    figures: day({ S3: 0 }),
    rules: { storeCodes: ['S3'] },
    outcome: 'complete',
    notes: [],
  },
  {
    name: 'one store (--store) zero on a day it is open: the whole key is held',
    known: around(-14, -1, open, ['S3']),
    figures: day({ S3: 0 }),
    rules: { storeCodes: ['S3'] },
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
  {
    name: 'a held Sunday judged again once later Sundays show the rhythm is complete, said',
    known: { pending: { [DAY]: 'suspect' }, ...around(-7, 14, closedSundays) },
    figures: day({ ...OPEN, S3: 0 }),
    rules: { now: new Date('2026-12-20T12:00:00Z') },
    outcome: 'complete',
    notes: ['settled'],
  },
  {
    name: 'a held day of a dark month judged again, the days around it held dark too (not open days): still held',
    known: {
      pending: { [DAY]: 'suspect' },
      held: around(-14, 14).complete,
      ...around(-14, 19, (store, each) => (each <= addDays(DAY, 14) ? 0 : open(store, each))),
    },
    figures: day({ S1: 0, S2: 0, S3: 0 }),
    rules: { now: new Date('2026-12-25T12:00:00Z') },
    outcome: 'pending',
    reason: 'suspect',
    notes: ['suspect'],
  },
];

describe('judgeDay: the verdict on a day, from its figures and what the state knows', () => {
  it.each(ROWS)('$name', (row) => {
    const verdict = judgeDay(PLACE, row.figures, { ...RULES, ...row.rules }, view(row.known));
    expect(kind(verdict)).toEqual({ outcome: row.outcome, notes: row.notes });
    if (verdict.outcome.kind === 'pending') expect(verdict.outcome.status.reason).toBe(row.reason);
    if (verdict.outcome.kind === 'pending') expect(verdict.outcome.correction).toBe(row.correction);
    for (const note of verdict.notes) if (note.kind === 'suspect' || note.kind === 'settled') expect(note.correction).toBe(row.correction);
  });

  it('without a state nothing is final: a plausible day is complete, every value zero is held', () => {
    expect(kind(judgeDay(PLACE, day(OPEN), RULES, undefined))).toEqual({ outcome: 'complete', notes: [] });
    expect(kind(judgeDay(PLACE, day({ S1: 0 }), RULES, undefined))).toEqual({ outcome: 'pending', notes: ['suspect'] });
  });

  it("a held day's store figures are kept, marked suspect, with the stores it found; a complete day's with none", () => {
    const held = judgeDay(PLACE, day({ ...OPEN, S2: 0 }), RULES, view(history(8)));
    expect(held.outcome).toMatchObject({ kind: 'pending', figures: { codes: ['S1', 'S2', 'S3'], suspect: true, found: ['S2'] } });
    const complete = judgeDay(PLACE, day(OPEN), RULES, view(history(8)));
    expect(complete.outcome).toMatchObject({ kind: 'complete', profile: [3, 3, 6, 310], figures: { suspect: false, found: [] } });
  });
});
