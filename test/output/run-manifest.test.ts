import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  type DayStanding,
  FolderManifests,
  formatManifest,
  isManifestName,
  MANIFESTS_KEPT,
  manifestName,
  newRunId,
  NumberedManifests,
  RunManifestBuilder,
  saveManifest,
  type ManifestFolder,
  type RunManifest,
} from '../../src/output/run-manifest.js';
import { useTempDirs } from '../helpers/tmp.js';
import { listingTogether, UNIT_WITHOUT_FILE } from '../helpers/manifests.js';

const tempDir = useTempDirs('run-manifest-');
const traffic = { name: 'traffic' };
const RUN = {
  runId: newRunId(Date.parse('2026-11-21T03:00:00Z')),
  version: '0.1.0',
  command: 'traffic --from 2026-11-18 --to 2026-11-20',
  start: new Date('2026-11-21T03:00:00Z'),
  layout: 'hive',
  format: 'csv',
  days: 'utc',
} as const;

describe('run ids', () => {
  it('are UUIDs version 7 that sort by start time as text, and differ within one millisecond', () => {
    const ids = [0, 1, 1_000, 86_400_000, 40 * 365 * 86_400_000].map((offset) => newRunId(Date.parse('2026-01-01T00:00:00Z') + offset));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(newRunId(5)).not.toBe(newRunId(5));
    // The first 48 bits are the start in milliseconds.
    expect(Number.parseInt(ids[0]!.replace('-', '').slice(0, 12), 16)).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it('of one start (a clock that stands still) sort in the order they were made, to the millisecond', () => {
    const start = Date.parse('2031-03-04T05:06:07Z');
    const made = [0, 1, 2, 1_000, 60_000, 86_400_000].map((offset) => Date.parse('2026-11-28T23:59:59.999Z') + offset);
    for (let round = 0; round < 20; round++) {
      const ids = made.map((madeAt) => newRunId(start, madeAt));
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect([...ids].sort()).toEqual(ids);
      expect(ids.every((id) => Number.parseInt(id.replace('-', '').slice(0, 12), 16) === start)).toBe(true);
    }
  });
});

describe('RunManifestBuilder', () => {
  it('tells every planned unit in plan order: written, unchanged, without results, failed, not attempted', () => {
    const planned = ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22'].map((day) => ({ metric: traffic, day }));
    const builder = new RunManifestBuilder(RUN, planned);
    // Recorded out of order: the manifest follows the plan.
    builder.record(planned[3]!, { ok: false, exitCode: 4, message: 'traffic 2026-11-21 page 1: HTTP 503 after 5 retries' });
    builder.record(planned[0]!, {
      ok: true,
      rows: 12,
      changed: true,
      file: { path: 'metric=traffic/dt=2026-11-18/traffic_2026-11-18.csv', bytes: 400, sha256: 'a'.repeat(64) },
    });
    builder.record(planned[1]!, {
      ok: true,
      rows: 10,
      changed: false,
      file: { path: 'metric=traffic/dt=2026-11-19/traffic_2026-11-19.csv', bytes: 380, sha256: 'b'.repeat(64) },
      rejected: { records: 1, path: '_rejected/x.ndjson' },
    });
    builder.record(planned[2]!, { ok: true, rows: 0, changed: false });
    const manifest = builder.build({
      end: new Date('2026-11-21T03:01:00Z'),
      exitCode: 4,
      requests: 9,
      throttled: 1,
      notAttempted: 'not attempted: the run ended before it',
      // The state's word on each day: made final by this run, final before it, or pending.
      standing: (unit): DayStanding =>
        unit.day === '2026-11-18'
          ? { status: 'final', finalized: true }
          : unit.day === '2026-11-19'
            ? { status: 'final' }
            : { status: 'provisional', reason: 'not-published' },
    });
    expect(manifest).toMatchObject({
      manifestVersion: 1,
      runId: RUN.runId,
      tool: 'area-metrics',
      start: '2026-11-21T03:00:00.000Z',
      end: '2026-11-21T03:01:00.000Z',
      exitCode: 4,
      requests: 9,
      throttled: 1,
      layout: 'hive',
    });
    expect(manifest.units).toEqual([
      {
        metric: 'traffic',
        day: '2026-11-18',
        store: null,
        path: 'metric=traffic/dt=2026-11-18/traffic_2026-11-18.csv',
        rows: 12,
        bytes: 400,
        sha256: 'a'.repeat(64),
        changed: true,
        status: 'final',
        finalized: true,
      },
      {
        metric: 'traffic',
        day: '2026-11-19',
        store: null,
        path: 'metric=traffic/dt=2026-11-19/traffic_2026-11-19.csv',
        rows: 10,
        bytes: 380,
        sha256: 'b'.repeat(64),
        changed: false,
        status: 'final',
        rejected: { records: 1, path: '_rejected/x.ndjson' },
      },
      {
        metric: 'traffic',
        day: '2026-11-20',
        store: null,
        path: null,
        rows: 0,
        bytes: null,
        sha256: null,
        changed: false,
        status: 'provisional',
        reason: 'not-published',
      },
      {
        metric: 'traffic',
        day: '2026-11-21',
        ...UNIT_WITHOUT_FILE,
        status: 'failed',
        error: { exitCode: 4, message: 'traffic 2026-11-21 page 1: HTTP 503 after 5 retries' },
      },
      {
        metric: 'traffic',
        day: '2026-11-22',
        ...UNIT_WITHOUT_FILE,
        status: 'failed',
        error: { exitCode: null, message: 'not attempted: the run ended before it' },
      },
    ]);
    // The text is the same manifest, one unit a line; no count is null where the run knew it.
    const text = formatManifest(manifest);
    expect(JSON.parse(text)).toEqual(manifest);
    expect(text.split('\n').filter((line) => line.startsWith('    {"metric"'))).toHaveLength(5);
    expect(builder.build({ end: new Date(), exitCode: 0, notAttempted: '' })).toMatchObject({ requests: null, throttled: null });
  });
});

describe('saveManifest', () => {
  const manifest = (runId: string): RunManifest =>
    new RunManifestBuilder({ ...RUN, runId }, []).build({ end: new Date(), exitCode: 0, notAttempted: '' });

  it('publishes <output>/_runs/seq-<number>.json, numbered on from the highest, and keeps the newest 200, nothing else touched', async () => {
    const out = await tempDir();
    const runs = join(out, '_runs');
    const first = await saveManifest(new NumberedManifests(new FolderManifests(out)), manifest(newRunId()));
    expect(first).toEqual({ location: join(runs, 'seq-000000000001.json'), pruned: 0 });
    // A name of another kind beside them (or a gap the pruning left) does not change the rule: the highest, plus one.
    for (const number of [5, 9, 10]) await writeFile(join(runs, manifestName(number)), '{}');
    await writeFile(join(runs, 'notes.txt'), 'mine');
    await writeFile(join(runs, 'seq-99.json'), '{}');
    const id = newRunId();
    const saved = await saveManifest(new NumberedManifests(new FolderManifests(out)), manifest(id), 3);
    expect(saved).toEqual({ location: join(runs, 'seq-000000000011.json'), pruned: 2 });
    expect((await readdir(runs)).sort()).toEqual([
      'notes.txt',
      'seq-000000000009.json',
      'seq-000000000010.json',
      'seq-000000000011.json',
      'seq-99.json',
    ]);
    expect(JSON.parse(await readFile(join(runs, 'seq-000000000011.json'), 'utf8'))).toMatchObject({ runId: id });
    expect(MANIFESTS_KEPT).toBe(200);
  });

  it('after run-id names of an earlier release: every new name sorts after them, so a loader whose mark is one of them reads it', async () => {
    const out = await tempDir();
    const runs = join(out, '_runs');
    await mkdir(runs);
    // Run ids from now to a century on: the largest a UUIDv7 name can be still sorts first.
    const older = [0, 1, 100 * 365].map((days) => `${newRunId(Date.now() + days * 86_400_000)}.json`);
    for (const name of older) await writeFile(join(runs, name), '{}');
    const shelf = new NumberedManifests(new FolderManifests(out));
    await saveManifest(shelf, manifest(newRunId()));
    await saveManifest(shelf, manifest(newRunId()), 4);
    const names = (await readdir(runs)).sort();
    // The newest 4 kept: the oldest run-id name went first.
    expect(names).toEqual([older[1], older[2], 'seq-000000000001.json', 'seq-000000000002.json']);
    const mark = `${'f'.repeat(8)}-ffff-7fff-bfff-${'f'.repeat(12)}.json`;
    expect(names.filter((name) => name > mark)).toEqual(['seq-000000000001.json', 'seq-000000000002.json']);
  });

  it('writers racing for the same number: each gets a number of its own, and no reader ever sees a number before a lower one', async () => {
    const out = await tempDir();
    const runs = join(out, '_runs');
    await mkdir(runs);
    const writers = 12;
    // Every writer lists before any creates: all of them aim at number 1 first.
    const together = listingTogether(writers);
    const racing = (): ManifestFolder => together(new FolderManifests(out));
    // A loader lists the folder over and over while they race.
    const listings: string[][] = [];
    let racingDone = false;
    const loader = (async () => {
      while (!racingDone) {
        listings.push((await readdir(runs)).filter(isManifestName).sort());
        await setImmediate();
      }
    })();
    const ids = Array.from({ length: writers }, () => newRunId());
    const saved = await Promise.all(ids.map((id) => saveManifest(new NumberedManifests(racing()), manifest(id))));
    racingDone = true;
    await loader;
    const expected = Array.from({ length: writers }, (_, index) => manifestName(index + 1));
    expect(saved.map((entry) => basename(entry.location)).sort()).toEqual(expected);
    expect(await readdir(runs)).toHaveLength(writers);
    const bodies = await Promise.all(
      expected.map(async (name) => (JSON.parse(await readFile(join(runs, name), 'utf8')) as RunManifest).runId),
    );
    expect(bodies.sort()).toEqual([...ids].sort());
    // Whatever a listing caught, it was 1..k: never a number without every one below it.
    expect(listings.length).toBeGreaterThan(0);
    for (const listing of listings) expect(listing).toEqual(expected.slice(0, listing.length));
  });

  it('a folder that cannot be listed publishes nothing (no number to take); one whose old manifests cannot be removed is reported, not thrown', async () => {
    const out = await tempDir();
    await writeFile(join(out, '_runs'), 'a file where the folder should be');
    await expect(saveManifest(new NumberedManifests(new FolderManifests(out)), manifest(newRunId()))).rejects.toThrow(/_runs/);
    const written: string[] = [];
    const folder: ManifestFolder = {
      locationOf: (name) => `mem:${name}`,
      create: async (name) => {
        written.push(name);
        return true;
      },
      names: async () => written,
      remove: async () => {
        throw new Error('AccessDenied');
      },
    };
    await saveManifest(new NumberedManifests(folder), manifest(newRunId()));
    const saved = await saveManifest(new NumberedManifests(folder), manifest(newRunId()), 1);
    expect(saved).toMatchObject({ location: 'mem:seq-000000000002.json', pruned: 0, pruneError: new Error('AccessDenied') });
  });
});
