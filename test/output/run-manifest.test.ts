import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type DayStanding,
  FolderManifests,
  formatManifest,
  MANIFESTS_KEPT,
  newRunId,
  RunManifestBuilder,
  saveManifest,
  type ManifestShelf,
  type RunManifest,
} from '../../src/output/run-manifest.js';
import { useTempDirs } from '../helpers/tmp.js';

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
        store: null,
        path: null,
        rows: null,
        bytes: null,
        sha256: null,
        changed: false,
        status: 'failed',
        error: { exitCode: 4, message: 'traffic 2026-11-21 page 1: HTTP 503 after 5 retries' },
      },
      {
        metric: 'traffic',
        day: '2026-11-22',
        store: null,
        path: null,
        rows: null,
        bytes: null,
        sha256: null,
        changed: false,
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

  it('writes <output>/_runs/<run id>.json atomically, and keeps the newest 200 manifests (by run id), nothing else touched', async () => {
    const out = await tempDir();
    const runs = join(out, '_runs');
    await mkdir(runs);
    const older = Array.from({ length: MANIFESTS_KEPT + 4 }, (_, index) => newRunId(Date.parse('2026-01-01T00:00:00Z') + index * 60_000));
    for (const id of older) await writeFile(join(runs, `${id}.json`), '{}');
    await writeFile(join(runs, 'notes.txt'), 'mine');
    const id = newRunId(Date.parse('2026-11-21T03:00:00Z'));
    const saved = await saveManifest(new FolderManifests(out), manifest(id));
    expect(saved).toEqual({ location: join(runs, `${id}.json`), pruned: 5 });
    const left = (await readdir(runs)).sort();
    expect(left).toHaveLength(MANIFESTS_KEPT + 1);
    expect(left).toContain('notes.txt');
    expect(left).toContain(`${id}.json`);
    expect(left).not.toContain(`${older[4]}.json`);
    expect(left).toContain(`${older[5]}.json`);
    expect(JSON.parse(await readFile(join(runs, `${id}.json`), 'utf8'))).toMatchObject({ runId: id });
  });

  it('a manifest written but older ones not removable is reported, not thrown; a manifest not written is thrown', async () => {
    const written: string[] = [];
    const shelf = (failing: 'names' | 'write'): ManifestShelf => ({
      locationOf: (name) => `mem:${name}`,
      write: async (name) => {
        if (failing === 'write') throw new Error('disk full');
        written.push(name);
      },
      names: async () => {
        throw new Error('AccessDenied');
      },
      remove: async () => {},
    });
    const id = newRunId();
    const saved = await saveManifest(shelf('names'), manifest(id));
    expect(saved).toMatchObject({ location: `mem:${id}.json`, pruned: 0, pruneError: new Error('AccessDenied') });
    expect(written).toEqual([`${id}.json`]);
    await expect(saveManifest(shelf('write'), manifest(id))).rejects.toThrow('disk full');
  });
});
