import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CoverageWritingStorage, folderCoverageWriter, folderManifests } from '../../src/destination/coverage-storage.js';
import { FileStateStorage } from '../../src/state/storage/storage.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('coverage-storage-');

/** A state text with traffic complete on the days, as this release writes it. */
const stateWith = (...complete: [string, string][]): string =>
  JSON.stringify({ version: 5, storeSets: {}, metrics: { traffic: { complete } } });

/** A run manifest that wrote traffic's `day` with `rows` rows, ending at `end`. */
function manifest(id: number, day: string, rows: number, end: string): string {
  const unit = {
    metric: 'traffic',
    day,
    store: null,
    path: `traffic/${day}.csv`,
    rows,
    bytes: 1,
    sha256: 'h',
    changed: true,
    status: 'final',
  };
  return JSON.stringify({ manifestVersion: 1, runId: `0000000${id}`, end, units: [unit] });
}

/** A folder output: its state file wrapped to rewrite the coverage table, and how often a manifest was read. */
async function folderOutput() {
  const dir = await tempDir();
  const stateFile = join(dir, '.area-metrics-state.json');
  const manifests = folderManifests(dir);
  const reads: string[] = [];
  const storage = new CoverageWritingStorage(new FileStateStorage(stateFile), {
    ...manifests,
    readManifest: (name) => (reads.push(name), manifests.readManifest(name)),
    write: folderCoverageWriter(stateFile),
  });
  const runs = join(dir, '_runs');
  await mkdir(runs);
  return { dir, storage, reads, runs, table: join(dir, '_coverage', 'coverage.parquet') };
}

async function tableOf(path: string): Promise<string[]> {
  const duck = await DuckDb.open();
  try {
    const rows = await duck.rows(
      `SELECT day::VARCHAR AS day, status, rows::VARCHAR AS rows, loaded_at::VARCHAR AS at FROM read_parquet(${sqlText(path)}) ORDER BY day`,
    );
    return rows.map((row) => `${String(row.day)} ${String(row.status)} ${String(row.rows)} ${row.at === null ? '-' : 'at'}`);
  } finally {
    duck.close();
  }
}

describe('a state storage that rewrites the coverage table', () => {
  it('rewrites it from each state it writes, loads from the manifests there at that moment, each manifest read once', async () => {
    const output = await folderOutput();
    await writeFile(join(output.runs, '00000001.json'), manifest(1, '2026-11-01', 10, '2026-11-02T04:30:00Z'));
    await output.storage.update(() => stateWith(['2026-11-01', '2026-11-02']));
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete 10 at', '2026-11-02 complete null -']);

    // The next run's manifest, then its state write: its day gets its load; the first manifest is not read again.
    await writeFile(join(output.runs, '00000002.json'), manifest(2, '2026-11-02', 7, '2026-11-03T04:30:00Z'));
    await output.storage.update(() => stateWith(['2026-11-01', '2026-11-03']));
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete 10 at', '2026-11-02 complete 7 at', '2026-11-03 complete null -']);
    expect(output.reads).toEqual(['00000001.json', '00000002.json']);

    // A manifest pruned since no longer tells a load; its day's status stays.
    await rm(join(output.runs, '00000001.json'));
    await output.storage.update(() => stateWith(['2026-11-01', '2026-11-03']));
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete null -', '2026-11-02 complete 7 at', '2026-11-03 complete null -']);
  });

  it("gives a --store key's day the sum of its stores' units and the latest of their times, the whole metric's its own", async () => {
    const output = await folderOutput();
    const unit = (store: string | null, rows: number) => ({
      metric: 'traffic',
      day: '2026-11-01',
      store,
      path: 'x',
      rows,
      bytes: 1,
      sha256: 'h',
      changed: true,
      status: 'final',
    });
    const runs = [
      { runId: '00000001', end: '2026-11-02T04:30:00Z', units: [unit('S1', 3), unit('S3', 9)] },
      { runId: '00000002', end: '2026-11-02T05:30:00Z', units: [unit('S2', 4), unit(null, 20)] },
    ];
    for (const run of runs) await writeFile(join(output.runs, `${run.runId}.json`), JSON.stringify({ manifestVersion: 1, ...run }));
    const day: [string, string] = ['2026-11-01', '2026-11-01'];
    await output.storage.update(() =>
      JSON.stringify({ version: 5, storeSets: {}, metrics: { traffic: { complete: [day] }, 'traffic[store=S1,S2]': { complete: [day] } } }),
    );
    const duck = await DuckDb.open();
    try {
      const rows = await duck.rows(
        `SELECT stores, rows::VARCHAR AS rows, strftime(loaded_at AT TIME ZONE 'UTC', '%H:%M') AS at FROM read_parquet(${sqlText(output.table)}) ORDER BY stores NULLS FIRST`,
      );
      expect(rows).toEqual([
        { stores: null, rows: '20', at: '05:30' },
        { stores: 'S1,S2', rows: '7', at: '05:30' },
      ]);
    } finally {
      duck.close();
    }
  });

  it('leaves the table alone when the state is left alone; a folder without manifests has no loads', async () => {
    const output = await folderOutput();
    await rm(output.runs, { recursive: true });
    await output.storage.update(() => stateWith(['2026-11-01', '2026-11-01']));
    const written = await stat(output.table);
    await output.storage.update(() => undefined);
    expect((await stat(output.table)).mtimeMs).toBe(written.mtimeMs);
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete null -']);
  });

  it('two runs writing at once leave the table of the last state, whichever table lands last', async () => {
    const output = await folderOutput();
    const stateFile = join(output.dir, '.area-metrics-state.json');
    // Run A's table waits until run B has written the state and its own table: A's, made from the state before B's
    // write, lands last.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const write = folderCoverageWriter(stateFile);
    const runA = new CoverageWritingStorage(new FileStateStorage(stateFile), {
      ...folderManifests(output.dir),
      write: async (bytes) => {
        await held;
        await write(bytes);
      },
    });
    const first = runA.update(() => stateWith(['2026-11-01', '2026-11-01']));
    await expect
      .poll(() =>
        stat(stateFile).then(
          () => true,
          () => false,
        ),
      )
      .toBe(true);
    await output.storage.update((current) => {
      const complete = (JSON.parse(current ?? '{}') as { metrics: { traffic: { complete: [string, string][] } } }).metrics.traffic.complete;
      return stateWith(...complete, ['2026-11-02', '2026-11-02']);
    });
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete null -', '2026-11-02 complete null -']);
    release();
    await first;
    expect(await tableOf(output.table)).toEqual(['2026-11-01 complete null -', '2026-11-02 complete null -']);
  });
});
