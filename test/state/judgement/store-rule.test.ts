import { describe, expect, it } from 'vitest';
import { STORE_RULE, confirmedByLaterDays, judgeStores } from '../../../src/state/judgement/store-rule.js';
import { storeFigures, type StoreFigures } from '../../../src/state/judgement/store-figures.js';
import { addDays, type CalendarDay } from '../../../src/window/days.js';

const DAY = '2026-11-28';
const CODES = ['S001', 'S002', 'S003', 'S004', 'S005'];
const INDEX = new Map(CODES.map((code, index) => [code, index]));

function figures(values: readonly number[]): StoreFigures {
  return storeFigures(CODES, Float64Array.from(values), INDEX);
}

/** A history of the days `back` days before DAY (1 = the day before), every store at its `level`. */
function historyOf(backs: Iterable<number>, level: (store: number, back: number) => number = () => 100) {
  const days = new Map<CalendarDay, StoreFigures>();
  for (const back of backs) days.set(addDays(DAY, -back), figures(CODES.map((_code, store) => level(store, back))));
  return (day: CalendarDay) => days.get(day);
}

const weeks = (...numbers: number[]) => numbers.map((week) => 7 * week);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
/** One store (S003) at `value`, the others at their usual 100. */
const oneStoreAt = (value: number) => figures([100, 100, value, 100, 100]);

/** S003 at each value `inside` is not found, and at each value `beyond` is, with `expected` as its range. */
function expectEdges(
  history: (day: CalendarDay) => StoreFigures | undefined,
  values: { readonly inside: readonly number[]; readonly beyond: readonly number[] },
  expected: { median: number; low: number; high: number; basis: 'weekday' | 'recent' },
): void {
  for (const value of values.inside) expect(judgeStores(DAY, oneStoreAt(value), history).stores).toEqual([]);
  for (const value of values.beyond)
    expect(judgeStores(DAY, oneStoreAt(value), history).stores).toEqual([{ store: 'S003', value, ...expected }]);
}

describe('the per-store rule', () => {
  it('judges a store by its same weekday over 8 weeks: the 8th week back counts, the 9th does not', () => {
    // Four complete Saturdays at 100: weeks 5-8 are in the window.
    expect(judgeStores(DAY, oneStoreAt(300), historyOf(weeks(5, 6, 7, 8))).stores.map(({ store }) => store)).toEqual(['S003']);
    // Weeks 6-9: only three are in it, too few weekdays and too few recent days, so nobody is judged.
    expect(judgeStores(DAY, oneStoreAt(300), historyOf(weeks(6, 7, 8, 9)))).toEqual({ judged: 0, stores: [] });
  });

  it('needs 4 same weekdays; with 3 it falls back to the 28 recent days, the 28th counting and the 29th not', () => {
    const weekdayJudged = judgeStores(DAY, oneStoreAt(100), historyOf(weeks(1, 2, 3, 4)));
    expect(weekdayJudged.judged).toBe(5);
    // Three Saturdays (the 28th day back is one) and four other days: 7 recent days, judged from them.
    const recent = judgeStores(DAY, oneStoreAt(1000), historyOf([...weeks(1, 2), 1, 2, 3, 4, 28]));
    expect(recent.stores).toEqual([expect.objectContaining({ store: 'S003', basis: 'recent' })]);
    // The same with the 29th day instead of the 28th: 6 recent days, not judged.
    expect(judgeStores(DAY, oneStoreAt(1000), historyOf([...weeks(1, 2), 1, 2, 3, 4, 29])).judged).toBe(0);
    expect(STORE_RULE.minimumRecentDays).toBe(7);
  });

  it('holds a store within the floor of its weekday (x1.6) and finds it just beyond, either way', () => {
    const history = historyOf(weeks(1, 2, 3, 4, 5, 6, 7, 8));
    expectEdges(history, { inside: [159, 63], beyond: [161, 62] }, { median: 100, low: 62.5, high: 160, basis: 'weekday' });
  });

  it("names a store's figure to six significant digits, as a day's total is shown", () => {
    const history = historyOf(weeks(1, 2, 3, 4, 5, 6, 7, 8));
    expect(judgeStores(DAY, oneStoreAt(1000 / 3), history).stores).toEqual([expect.objectContaining({ store: 'S003', value: 333.333 })]);
  });

  it('in the fallback, allows the whole week (x2.5), since Tuesdays and Saturdays are mixed in its history', () => {
    const history = historyOf(range(1, 10));
    expectEdges(history, { inside: [249, 41], beyond: [251, 39] }, { median: 100, low: 40, high: 250, basis: 'recent' });
  });

  it('allows a store that varies much more: 4 scaled MADs when they pass the floor', () => {
    // S003 alternates 50 and 200 over its Saturdays: MAD of the logs ln 2, so the floor is not what decides.
    const history = historyOf(weeks(1, 2, 3, 4, 5, 6, 7, 8), (store, back) => (store === 2 ? (back % 14 === 0 ? 50 : 200) : 100));
    expect(judgeStores(DAY, oneStoreAt(1000), history).stores).toEqual([]);
  });

  it('allows exactly 4 x 1.4826 MADs (on the logs) when they pass the floor', () => {
    // S003's Saturdays alternate 120 and 100/1.2: a median of 100 and a MAD of ln 1.2, so 100 x 1.2^(4 x 1.4826) either way.
    const history = historyOf(weeks(1, 2, 3, 4, 5, 6, 7, 8), (store, back) => (store !== 2 ? 100 : back % 14 === 0 ? 120 : 100 / 1.2));
    expectEdges(history, { inside: [294, 34], beyond: [296, 33.8] }, { median: 100, low: 33.92, high: 294.8, basis: 'weekday' });
  });

  it('judges by the days before it: the day itself is never its own history', () => {
    // With the day itself, these would be 4 same weekdays, or 7 recent days.
    expect(judgeStores(DAY, oneStoreAt(1000), historyOf([0, ...weeks(1, 2, 3)])).judged).toBe(0);
    expect(judgeStores(DAY, oneStoreAt(1000), historyOf(range(0, 6))).judged).toBe(0);
  });

  it('finds a store at zero where its history is not, and leaves one whose history is mostly zeros', () => {
    const history = historyOf(weeks(1, 2, 3, 4), (store, back) => (store === 4 && back > 7 ? 0 : 100));
    const judgement = judgeStores(DAY, figures([100, 100, 0, 100, 0]), history);
    expect(judgement.stores).toEqual([expect.objectContaining({ store: 'S003', value: 0, allZero: true })]);
    // Half its days at zero is zeros' normal too; one in four is not.
    const half = historyOf(weeks(1, 2, 3, 4), (store, back) => (store === 4 && back > 14 ? 0 : 100));
    expect(judgeStores(DAY, figures([100, 100, 100, 100, 0]), half).stores).toEqual([]);
    const quarter = historyOf(weeks(1, 2, 3, 4), (store, back) => (store === 4 && back > 21 ? 0 : 100));
    expect(judgeStores(DAY, figures([100, 100, 100, 100, 0]), quarter).stores.map(({ store }) => store)).toEqual(['S005']);
  });

  it('makes most stores moving by one factor one suspicion of the day, and still names a store that moved apart', () => {
    const history = historyOf(weeks(1, 2, 3, 4));
    const half = judgeStores(DAY, figures([50, 52, 48, 51, 5]), history);
    expect(half.batch).toEqual({ factor: 0.5, stores: 4, judged: 5 });
    expect(half.stores.map(({ store }) => store)).toEqual(['S005']);
    // Two of five stores moving together is not the day's batch, but two stores' own findings.
    const two = judgeStores(DAY, figures([50, 50, 100, 100, 100]), history);
    expect(two.batch).toBeUndefined();
    expect(two.stores.map(({ store }) => store)).toEqual(['S001', 'S002']);
  });

  it('makes a batch of 3 judged stores moving together, not of 2', () => {
    const history = historyOf(weeks(1, 2, 3, 4));
    const three = judgeStores(DAY, storeFigures(['S001', 'S002', 'S003'], Float64Array.from([50, 50, 50])), history);
    expect(three).toEqual({ judged: 3, batch: { factor: 0.5, stores: 3, judged: 3 }, stores: [] });
    const two = judgeStores(DAY, storeFigures(['S001', 'S002'], Float64Array.from([50, 50])), history);
    expect(two.batch).toBeUndefined();
    expect(two.stores.map(({ store }) => store)).toEqual(['S001', 'S002']);
  });

  it('needs 60% of the judged stores within x1.25 of their common move for a batch', () => {
    const codes = ['S001', 'S002', 'S003', 'S004', 'S005', 'S006', 'S007'];
    // Every day before it, every store at 100.
    const usual = storeFigures(codes, Float64Array.from(codes.map(() => 100)));
    const history = () => usual;
    const judge = (values: number[]) => judgeStores(DAY, storeFigures(codes.slice(0, values.length), Float64Array.from(values)), history);
    // 3 of 5 (60%) at half: one suspicion of the day; 4 of 7 (57%): each store's own finding.
    expect(judge([50, 50, 50, 100, 100]).batch).toEqual({ factor: 0.5, stores: 3, judged: 5 });
    expect(judge([50, 50, 50, 50, 100, 100, 100]).batch).toBeUndefined();
    // A store x1.22 from the common move is with it, one x1.27 is not (3 of 5 against 2 of 5).
    expect(judge([50 / 1.22, 50, 50, 100, 100]).batch).toEqual({ factor: 0.5, stores: 3, judged: 5 });
    expect(judge([50 / 1.27, 50, 50, 100, 100]).batch).toBeUndefined();
  });

  it('does not judge a store with no history, nor the batch of fewer than 3 judged stores', () => {
    const history = historyOf(weeks(1, 2, 3, 4));
    const judgement = judgeStores(DAY, storeFigures(['S006', 'S007'], Float64Array.from([0, 5000])), history);
    expect(judgement).toEqual({ judged: 0, stores: [] });
  });
});

describe('a held store confirmed by the days after it', () => {
  /** S003 found at `value` on DAY, judged against the days `ahead` days after DAY (1 = the day after) at `level`. */
  function confirmed(value: number, ahead: Iterable<number>, level: number): ReadonlySet<string> {
    const before = historyOf(weeks(1, 2, 3, 4, 5, 6, 7, 8));
    const [finding] = judgeStores(DAY, oneStoreAt(value), before).stores;
    expect(finding).toMatchObject({ store: 'S003', value });
    const after = new Map([...ahead].map((days) => [addDays(DAY, days), figures([100, 100, level, 100, 100])]));
    return confirmedByLaterDays(DAY, (day) => after.get(day) ?? before(day), [finding!]);
  }

  it('is at a new level once 7 of the 28 days after it (the 28th counting) hold it, or 4 of its weekdays', () => {
    expect(confirmed(200, [1, 2, 3, 4, 5, 6, 28], 200)).toEqual(new Set(['S003']));
    expect(confirmed(200, [1, 2, 3, 4, 5, 6], 200)).toEqual(new Set());
    expect(confirmed(200, [1, 2, 3, 4, 5, 6, 29], 200)).toEqual(new Set());
    expect(confirmed(200, weeks(1, 2, 3, 4), 200)).toEqual(new Set(['S003']));
  });

  it('is within a third to three times the old level only: beyond, a person settles it', () => {
    expect(confirmed(300, range(1, 28), 300)).toEqual(new Set(['S003']));
    expect(confirmed(34, range(1, 28), 34)).toEqual(new Set(['S003']));
    expect(confirmed(301, range(1, 28), 301)).toEqual(new Set());
    expect(confirmed(33, range(1, 28), 33)).toEqual(new Set());
    expect(confirmed(10, range(1, 28), 10)).toEqual(new Set());
  });

  it('is not when the days after it are back at the old level (a one-day spike), nor when it is at zero', () => {
    expect(confirmed(500, range(1, 28), 100)).toEqual(new Set());
    expect(confirmed(0, range(1, 28), 0)).toEqual(new Set());
  });
});
