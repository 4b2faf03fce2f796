import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importConfigOf, NO_DATABASE } from '../helpers/import-config.js';
import { RunRecords } from '../../src/import/records.js';
import { RunTally } from '../../src/import/tally.js';
import { ObjectStores } from '../../src/destination/object-stores.js';
import { openDestination } from '../../src/destination/open.js';
import type { Logger } from '../../src/log/logger.js';
import type { UnitOutcome } from '../../src/import/pipeline.js';
import { planUnits } from '../../src/import/plan.js';
import type { Unit } from '../../src/metrics/unit.js';
import { startLineageServer, type LineageServer } from '../helpers/lineage-server.js';
import { openLineageErrors } from '../helpers/openlineage.js';
import { startS3, storeConfig, type S3Harness } from '../helpers/s3.js';
import { unitDataOf } from '../helpers/unit-data.js';
import { systemWallClock, type WallClock } from '../../src/window/wall-clock.js';

let s3: S3Harness;
let lineage: LineageServer;
const logged: string[] = [];
const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (line) => logged.push(`warn: ${line}`),
  error: (line) => logged.push(`error: ${line}`),
};

beforeAll(async () => {
  [s3, lineage] = await Promise.all([startS3(), startLineageServer()]);
});
afterAll(async () => {
  await Promise.all([s3?.close(), lineage?.close()]);
});
afterEach(() => {
  s3.faults.denyWrites = false;
  lineage.received.length = 0;
  logged.length = 0;
});

/** The records of a hive-layout run of traffic into `s3://<bucket>/<prefix>`, for these days. */
async function openRecords(
  prefix: string,
  days: string[],
  clock: WallClock = systemWallClock,
): Promise<{ records: RunRecords; units: Unit[]; stores: ObjectStores; commit: (outcome: UnitOutcome) => void }> {
  const raw = {
    baseUrl: 'https://api.example.test/',
    clientId: 'id',
    clientSecret: 'secret-value',
    output: `s3://${s3.bucket}/${prefix}`,
    layout: 'hive',
    openlineageUrl: lineage.url,
  };
  const config = await importConfigOf(raw, {}, 1);
  const units = planUnits([{ metric: 'traffic', days }], []);
  const stores = new ObjectStores(storeConfig(s3, logger));
  const tally = new RunTally();
  const records = await RunRecords.open({
    commandName: 'traffic',
    command: 'traffic --from ...',
    output: { ...config.output, layout: 'hive', format: 'csv' },
    window: { ...config.window, dayMode: 'utc' },
    baseUrl: config.api.baseUrl,
    clock,
    units,
    destination: openDestination(config.output.destination, { stores, stdout: process.stdout, database: NO_DATABASE }),
    tally,
    env: {},
    logger,
    redact: (text) => text.replaceAll('secret-value', '***'),
  });
  // A committed unit reaches the run's tally and its records, as in a run.
  const commit = (outcome: UnitOutcome): void => {
    tally.add(outcome);
    records.unit(outcome);
  };
  return { records, units, stores, commit };
}

/** A written unit of `rows` rows, stored as `bytes` bytes. */
function written(unit: Unit, rows: number, bytes: number): UnitOutcome {
  const path = `metric=traffic/dt=${unit.day}/traffic_${unit.day}.csv`;
  const data = unitDataOf(unit, rows);
  return { unit, ok: true, data, destination: path, changed: true, file: { path, bytes, sha256: 'c'.repeat(64) } };
}

describe('RunRecords into a bucket', () => {
  it("names the outputs s3://<bucket> and the metric's prefix, and keeps the manifest beside the data", async () => {
    const { records, units, stores, commit } = await openRecords('lake/nightly', ['2026-11-20', '2026-11-21']);
    commit(written(units[0]!, 12, 400));
    commit({ unit: units[1]!, ok: false, error: new Error('HTTP 503 for client secret-value') });
    expect(await records.finish({ exitCode: 4, failure: new Error('traffic 2026-11-21: HTTP 503') })).toBe(4);
    stores.close();
    const [start, fail] = lineage.received.map(({ body }) => body);
    for (const event of [start!, fail!]) expect(openLineageErrors(event)).toEqual([]);
    expect(fail).toMatchObject({
      eventType: 'FAIL',
      inputs: [{ namespace: 'https://api.example.test', name: '/api/bi/area-metrics/traffic/' }],
      outputs: [
        {
          namespace: `s3://${s3.bucket}`,
          name: 'lake/nightly/metric=traffic',
          outputFacets: { outputStatistics: { rowCount: 12, size: 400, fileCount: 1 } },
        },
      ],
      run: { facets: { errorMessage: { message: 'traffic 2026-11-21: HTTP 503' } } },
    });
    const manifests = await s3.objects('lake/nightly/_runs');
    expect([...manifests.keys()]).toEqual(['seq-000000000001.json']);
    const manifest = JSON.parse([...manifests.values()][0]!.toString()) as { runId: string; units: unknown[] };
    expect(manifest.runId).toBe((fail as { run: { runId: string } }).run.runId);
    expect(manifest.units).toEqual([
      expect.objectContaining({ day: '2026-11-20', rows: 12, bytes: 400, changed: true }),
      expect.objectContaining({ day: '2026-11-21', error: { exitCode: 1, message: 'HTTP 503 for client ***' } }),
    ]);
  });

  it('a manifest that cannot be written makes a clean run exit 7, with one error line and a FAIL event', async () => {
    const { records, units, stores, commit } = await openRecords('denied', ['2026-11-20']);
    commit(written(units[0]!, 3, 100));
    s3.faults.denyWrites = true;
    expect(await records.finish({ exitCode: 0 })).toBe(7);
    stores.close();
    expect(logged).toEqual([
      expect.stringMatching(new RegExp(`^error: cannot write s3://${s3.bucket}/denied/_runs/\\S+\\.json: the store refused: AccessDenied`)),
    ]);
    expect(lineage.received.map(({ body }) => body.eventType)).toEqual(['START', 'FAIL']);
  });

  it("stamps the manifest and each lineage event with the run's clock, read at each stamp", async () => {
    // A clock years from the system's, moved by the test between the run's start and its end.
    const readings = [new Date('2031-03-04T05:06:07.000Z'), new Date('2031-03-04T05:09:11.000Z')];
    let reading = readings[0]!;
    const { records, units, stores, commit } = await openRecords('clocked', ['2026-11-20'], () => reading);
    commit(written(units[0]!, 3, 100));
    reading = readings[1]!;
    expect(await records.finish({ exitCode: 0 })).toBe(0);
    stores.close();
    const [start, complete] = lineage.received.map(({ body }) => body as { eventTime: string; run: { runId: string } });
    expect([start!.eventTime, complete!.eventTime]).toEqual(readings.map((at) => at.toISOString()));
    const manifest = JSON.parse([...(await s3.objects('clocked/_runs')).values()][0]!.toString()) as {
      runId: string;
      start: string;
      end: string;
    };
    expect([manifest.start, manifest.end]).toEqual(readings.map((at) => at.toISOString()));
    // A UUIDv7's first 48 bits are its start in milliseconds.
    expect(Number.parseInt(manifest.runId.replace('-', '').slice(0, 12), 16)).toBe(readings[0]!.getTime());
    expect(complete!.run.runId).toBe(manifest.runId);
  });
});
