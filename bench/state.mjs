// The state file with a year of daily profiles: its size, the time to read it (what every run and `status` pay first)
// and to record one more day (what each completed day costs a run), against the same year without profiles (coverage
// only, as before profiles were kept). In-process on the built code; the rounds of the two interleaved.
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImportState } from '../dist/state/import-state.js';
import { encodeStoreSet, storeSetId } from '../dist/state/storage/store-sets.js';
import { FileStateStorage } from '../dist/state/storage/storage.js';
import { median, tempDir } from './lib.mjs';

const METRICS = ['unique-users', 'avg-screen-time', 'traffic'];
const DAYS = 365;
const DAY_MS = 86_400_000;

const dayOf = (/** @type {number} */ ms) => new Date(ms).toISOString().slice(0, 10);

/** A state a year of nightly runs leaves: every metric complete for DAYS days, 12 stores, with or without profiles. */
/** @param {number} now @param {boolean} withProfiles */
function yearOfState(now, withProfiles) {
  const last = Math.floor(now / DAY_MS) * DAY_MS - 2 * DAY_MS;
  const first = last - (DAYS - 1) * DAY_MS;
  const codes = Array.from({ length: 12 }, (_, index) => `S${String(index + 1).padStart(3, '0')}`);
  const id = storeSetId(codes);
  /** @type {Record<string, unknown>} */
  const metrics = {};
  for (const metric of METRICS) {
    /** @type {Record<string, number[]>} */
    const profiles = {};
    for (let day = 0; day < DAYS; day++)
      profiles[dayOf(first + day * DAY_MS)] = [12, 12, 48, Number((1000 + ((day * 7919) % 500) + 0.123456).toPrecision(6))];
    metrics[metric] = { complete: [[dayOf(first), dayOf(last)]], stores: 12, storeSet: id, ...(withProfiles ? { profiles } : {}) };
  }
  return { state: { version: 4, metrics, storeSets: { [id]: encodeStoreSet(codes) } }, next: dayOf(last + DAY_MS) };
}

export async function stateBenchmark({ rounds = 41 } = {}) {
  const now = Date.now();
  const dir = await tempDir('state');
  /** @typedef {'profiles' | 'coverage'} Variant */
  /** @type {Record<Variant, { read: number[], record: number[] }>} */
  const samples = { profiles: { read: [], record: [] }, coverage: { read: [], record: [] } };
  /** @type {Partial<Record<Variant, number>>} */
  const sizes = {};
  try {
    for (const [variant, withProfiles] of /** @type {[Variant, boolean][]} */ ([
      ['profiles', true],
      ['coverage', false],
    ])) {
      const { state } = yearOfState(now, withProfiles);
      const path = join(dir, `${variant}.json`);
      // Written once by the code itself, so the size is that of the real text format.
      await writeFile(path, JSON.stringify(state));
      const loaded = await ImportState.load(new FileStateStorage(path), { now: new Date(now), metricNames: METRICS });
      await loaded.recordRun({ time: new Date(now).toISOString(), command: 'all --catch-up', exitCode: 0, rows: { traffic: 1 } });
      sizes[variant] = (await stat(path)).size;
    }
    for (let round = 0; round < rounds; round++) {
      for (const variant of /** @type {Variant[]} */ (['profiles', 'coverage'])) {
        const path = join(dir, `${variant}.json`);
        const original = await readFile(path);
        let started = performance.now();
        const state = await ImportState.load(new FileStateStorage(path), { now: new Date(now), metricNames: METRICS });
        samples[variant].read.push(performance.now() - started);
        const { next } = yearOfState(now, false);
        started = performance.now();
        await state.markComplete(
          'traffic',
          next,
          state.storeCodes('traffic') ?? [],
          variant === 'profiles' ? [12, 12, 48, 1200] : undefined,
        );
        samples[variant].record.push(performance.now() - started);
        await writeFile(path, original);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const summary = (/** @type {Variant} */ variant) => ({
    bytes: sizes[variant],
    readMs: median(samples[variant].read),
    recordMs: median(samples[variant].record),
  });
  return { days: DAYS, metrics: METRICS.length, rounds, profiles: summary('profiles'), coverage: summary('coverage') };
}
