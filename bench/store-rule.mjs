#!/usr/bin/env node
// The per-store rule on the sandbox's honest data, and its cost at the vendor's scale. `node bench/store-rule.mjs`
// after `npm run build`. Prints how many days the rule would hold over a year at 2, 20 and 200 stores (each day judged
// and recorded as the import does it, by the backtest's `src/backtest/sandbox-days.ts`, which the tests share), and for 20,000 stores x 3
// metrics: the size of eight weeks of store figures, the time to read them back, and the time to judge one day.
import { parseArgs } from 'node:util';
import { DESCRIPTORS } from '../dist/metrics/descriptors.js';
import { backtestSandbox } from '../dist/backtest/sandbox-days.js';
import { decodeFigures, encodeFigures, storeFigures } from '../dist/state/judgement/store-figures.js';
import { judgeStores } from '../dist/state/judgement/store-rule.js';
import { addDays } from '../dist/window/days.js';

const { values: flags } = parseArgs({ options: { days: { type: 'string', default: '365' }, zones: { type: 'string', default: '8' } } });
const DAYS = Number(flags.days);
const FIRST = '2025-06-01';

/** @param {string} text @param {number} stores */
function decoded(text, stores) {
  const values = decodeFigures(text, stores);
  if (values === undefined) throw new Error('figures of another length');
  return values;
}

/**
 * The year replayed as an import judges it (`src/backtest/sandbox-days.ts`, which the tests use too); then the year's
 * last day again, broken as vendors break it, judged against the history the year left: is it found?
 * @param {number} stores
 */
async function falseHolds(stores) {
  const replayed = await backtestSandbox({ stores, zones: Number(flags.zones), seed: 20_261_128, from: FIRST, days: DAYS });
  const last = addDays(FIRST, DAYS - 1);
  return replayed.map(({ metric, held, state }) => {
    const history = state.storeHistory(metric);
    const figures = history(last);
    if (figures === undefined) throw new Error(`${metric} ${last} was not recorded complete`);
    /** @param {(value: number, store: number) => number} change */
    const broken = (change) => {
      const found = judgeStores(last, storeFigures(figures.codes, figures.values.map(change), figures.indexOf), history);
      return found.batch ? `day x${found.batch.factor}` : found.stores.map(({ store }) => store).join(' ') || 'nothing';
    };
    const suspect = held.map((day) => day.suspicion);
    return {
      stores,
      metric,
      days: DAYS,
      held: held.length,
      batches: suspect.filter((suspicion) => suspicion.batch).length,
      storeFindings: suspect.reduce((sum, suspicion) => sum + (suspicion.stores?.count ?? 0), 0),
      dark: broken((value, store) => (store === 0 ? 0 : value)),
      tenth: broken((value, store) => (store === 0 ? value / 10 : value)),
      fiveTimes: broken((value, store) => (store === 0 ? value * 5 : value)),
      half: broken((value) => value / 2),
    };
  });
}

function scale() {
  const stores = 20_000;
  const codes = Array.from({ length: stores }, (_, index) => `S${String(index + 1).padStart(5, '0')}`);
  const indexOf = new Map(codes.map((code, index) => [code, index]));
  /** @type {Record<string, Record<string, string>>} */
  const kept = {};
  for (const metric of DESCRIPTORS) {
    /** @type {Record<string, string>} */
    const days = {};
    kept[metric.name] = days;
    for (let back = 1; back <= 56; back++) {
      const values = Float64Array.from({ length: stores }, (_, index) => 100 + ((index * 7919 + back * 104_729) % 900));
      days[addDays('2026-11-28', -back)] = encodeFigures(values);
    }
  }
  const text = JSON.stringify({ storeSet: codes, figures: kept });
  const readStarted = performance.now();
  const parsed = JSON.parse(text);
  /** @type {Map<string, ReturnType<typeof storeFigures>>} */
  const history = new Map();
  for (const [day, figuresText] of Object.entries(parsed.figures['unique-users']))
    history.set(day, storeFigures(parsed.storeSet, decoded(figuresText, stores), indexOf));
  const readMs = performance.now() - readStarted;
  const allStarted = performance.now();
  const again = JSON.parse(text);
  for (const metric of Object.keys(again.figures))
    for (const figuresText of Object.values(again.figures[metric])) decodeFigures(figuresText, stores);
  const readAllMs = performance.now() - allStarted;
  const today = storeFigures(
    codes,
    Float64Array.from({ length: stores }, (_, index) => 100 + ((index * 31) % 900)),
    indexOf,
  );
  const judgeStarted = performance.now();
  const judgement = judgeStores('2026-11-28', today, (day) => history.get(day));
  const judgeMs = performance.now() - judgeStarted;
  return {
    stores,
    metrics: DESCRIPTORS.length,
    days: 56,
    bytes: text.length,
    readOneMetricMs: Math.round(readMs),
    readAllMs: Math.round(readAllMs),
    judgeOneDayMs: Math.round(judgeMs),
    judged: judgement.judged,
  };
}

for (const stores of [2, 20, 200]) console.table(await falseHolds(stores));
console.table([scale()]);

/** The state file itself with 20,000 stores' figures for 3 metrics x 70 days: its size, a run's read, one day recorded. */
async function stateAtScale() {
  const { mkdtemp, rm, stat, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { ImportState } = await import('../dist/state/import-state.js');
  const { FileStateStorage } = await import('../dist/state/storage/storage.js');
  const { encodeStoreSet, storeSetId } = await import('../dist/state/storage/store-sets.js');
  const stores = 20_000;
  const codes = Array.from({ length: stores }, (_, index) => `S${String(index + 1).padStart(5, '0')}`);
  const id = storeSetId(codes);
  const now = Date.parse('2026-11-28T12:00:00Z');
  const last = '2026-11-26';
  /** @type {Record<string, unknown>} */
  const metrics = {};
  for (const metric of DESCRIPTORS) {
    /** @type {Record<string, [string, string]>} */
    const figures = {};
    for (let back = 0; back < 70; back++) {
      const values = Float64Array.from({ length: stores }, (_, index) => 100 + ((index * 7919 + back * 104_729) % 900));
      figures[addDays(last, -back)] = [id, encodeFigures(values)];
    }
    metrics[metric.name] = { complete: [[addDays(last, -364), last]], stores, storeSet: id, storeFigures: figures };
  }
  const dir = await mkdtemp(join(tmpdir(), 'store-rule-'));
  const path = join(dir, 'state.json');
  await writeFile(path, JSON.stringify({ version: 5, metrics, storeSets: { [id]: encodeStoreSet(codes) } }));
  const options = { now: new Date(now), metricNames: DESCRIPTORS.map((metric) => metric.name) };
  const reads = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    await ImportState.load(new FileStateStorage(path), options);
    reads.push(performance.now() - started);
  }
  const state = await ImportState.load(new FileStateStorage(path), options);
  const judgeStarted = performance.now();
  const today = storeFigures(
    codes,
    Float64Array.from({ length: stores }, (_, index) => 100 + ((index * 31) % 900)),
  );
  judgeStores('2026-11-27', today, state.storeHistory('unique-users'));
  const judgeMs = performance.now() - judgeStarted;
  const recordStarted = performance.now();
  await state.markComplete('unique-users', '2026-11-27', codes, undefined, { codes, values: today.values, suspect: false });
  const recordMs = performance.now() - recordStarted;
  const bytes = (await stat(path)).size;
  await rm(dir, { recursive: true, force: true });
  return {
    stores,
    metrics: DESCRIPTORS.length,
    days: 70,
    stateMB: Number((bytes / 1e6).toFixed(1)),
    readMs: reads.map((ms) => Math.round(ms)).join(' '),
    decodeAndJudgeMs: Math.round(judgeMs),
    recordDayMs: Math.round(recordMs),
  };
}

console.table([await stateAtScale()]);
