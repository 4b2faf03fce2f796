import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coverageParquet, manifestLoads, unitLoadKey } from '../../src/output/coverage-file.js';
import type { ManifestUnit, RunManifest } from '../../src/output/run-manifest.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('coverage-file-');

/** A unit as a manifest tells it: a final day of traffic, every store, written anew. */
function unit(overrides: Partial<ManifestUnit> = {}): ManifestUnit {
  return {
    metric: 'traffic',
    day: '2026-11-01',
    store: null,
    path: 'traffic/2026-11-01.csv',
    rows: 10,
    bytes: 100,
    sha256: 'h',
    changed: true,
    status: 'final',
    ...overrides,
  };
}

/** A run that ended at `end` (its id sorts as its start does). */
function run(id: number, end: string, units: ManifestUnit[]): RunManifest {
  return {
    manifestVersion: 1,
    runId: `0000000${id}-0000-7000-8000-000000000000`,
    tool: 'area-metrics',
    version: 'test',
    command: 'traffic',
    start: end,
    end,
    exitCode: 0,
    requests: null,
    throttled: null,
    layout: 'flat',
    format: 'csv',
    days: 'utc',
    units,
  };
}

const traffic = unitLoadKey('traffic', '2026-11-01', '');

describe("each unit's last load, from the manifests", () => {
  const cases: { name: string; runs: RunManifest[]; expected: string | undefined }[] = [
    { name: 'one run', runs: [run(1, '2026-11-02T04:30:00.000Z', [unit()])], expected: '10 2026-11-02T04:30:00.000Z' },
    {
      name: 'the newest run that wrote new bytes, whatever order the manifests are read in',
      runs: [run(2, '2026-11-03T04:30:00.000Z', [unit({ rows: 12 })]), run(1, '2026-11-02T04:30:00.000Z', [unit()])],
      expected: '12 2026-11-03T04:30:00.000Z',
    },
    {
      name: 'of two overlapping runs, the one that ended last',
      runs: [run(1, '2026-11-03T05:00:00.000Z', [unit({ rows: 11 })]), run(2, '2026-11-03T04:50:00.000Z', [unit({ rows: 12 })])],
      expected: '11 2026-11-03T05:00:00.000Z',
    },
    {
      name: 'a re-run that left the file as it was keeps the time it was written',
      runs: [run(1, '2026-11-02T04:30:00.000Z', [unit()]), run(2, '2026-11-03T04:30:00.000Z', [unit({ changed: false })])],
      expected: '10 2026-11-02T04:30:00.000Z',
    },
    {
      name: 'a failed unit, one without results and a settlement load nothing',
      runs: [
        run(1, '2026-11-02T04:30:00.000Z', [unit()]),
        run(2, '2026-11-03T04:30:00.000Z', [unit({ status: 'failed', rows: null, path: null })]),
        run(3, '2026-11-04T04:30:00.000Z', [unit({ rows: 0, path: null, changed: false })]),
        run(4, '2026-11-05T04:30:00.000Z', [unit({ rows: null, changed: false })]),
      ],
      expected: '10 2026-11-02T04:30:00.000Z',
    },
    { name: 'no manifest names the unit', runs: [run(1, '2026-11-02T04:30:00.000Z', [unit({ day: '2026-11-02' })])], expected: undefined },
  ];
  for (const { name, runs, expected } of cases) {
    it(name, () => {
      const load = manifestLoads(runs).get(traffic);
      expect(load === undefined ? undefined : `${load.rows} ${load.loadedAt.toISOString()}`).toBe(expected);
    });
  }

  it("keeps a store's unit apart from the whole day's", () => {
    const loads = manifestLoads([run(1, '2026-11-02T04:30:00.000Z', [unit(), unit({ store: 'S1', rows: 3 })])]);
    expect(loads.get(unitLoadKey('traffic', '2026-11-01', 'S1'))?.rows).toBe(3);
    expect(loads.get(traffic)?.rows).toBe(10);
  });
});

describe('the coverage Parquet file', () => {
  it('is typed as DuckDB reads it (a DATE day, a UTC timestamp, nulls where nothing is known)', async () => {
    const path = join(await tempDir(), 'coverage.parquet');
    const loadedAt = new Date('2026-11-02T04:30:01.250Z');
    await writeFile(
      path,
      await coverageParquet(
        [
          { metric: 'traffic', stores: null, day: '2026-11-01', status: 'complete', reason: null, rows: 10, loadedAt },
          { metric: 'traffic', stores: 'S1,S2', day: '1999-12-31', status: 'held', reason: 'suspect', rows: null, loadedAt: null },
        ],
        'area-metrics test',
      ),
    );
    const duck = await DuckDb.open();
    try {
      const file = sqlText(path);
      expect(await duck.columns(`read_parquet(${file})`)).toEqual([
        'metric VARCHAR',
        'stores VARCHAR',
        'day DATE',
        'status VARCHAR',
        'reason VARCHAR',
        'rows BIGINT',
        'loaded_at TIMESTAMP WITH TIME ZONE',
      ]);
      expect(
        await duck.rows(
          `SELECT metric, stores, day::VARCHAR AS day, status, reason, rows::VARCHAR AS rows, epoch_ms(loaded_at)::VARCHAR AS ms FROM read_parquet(${file})`,
        ),
      ).toEqual([
        {
          metric: 'traffic',
          stores: null,
          day: '2026-11-01',
          status: 'complete',
          reason: null,
          rows: '10',
          ms: String(loadedAt.getTime()),
        },
        { metric: 'traffic', stores: 'S1,S2', day: '1999-12-31', status: 'held', reason: 'suspect', rows: null, ms: null },
      ]);
    } finally {
      duck.close();
    }
  });
});
