/**
 * The facets a scheduler and a catalog join on: the job's type, the run's nominal time, engine and parent (from
 * `OPENLINEAGE_PARENT_ID`, as Airflow hands it to a task's process), the outputs' storage and the hive partitions a
 * run wrote. The BUILT binary against the sandbox; every event is checked against the spec's schemas, facets
 * included (test/fixtures/openlineage).
 */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { assertBuilt, type CliResult } from '../helpers/cli.js';
import { startLineageServer, type LineageServer } from '../helpers/lineage-server.js';
import { latestManifest } from '../helpers/manifests.js';
import { openLineageErrors } from '../helpers/openlineage.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { useTempDirs } from '../helpers/tmp.js';

const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const tempDir = useTempDirs('lineage-facets-');
const daysAgo = daysBefore(CLOCK);
const PARENT_RUN = '01936b2e-5c40-7a1e-9d3c-52b1f0e4a7c2';
const ROOT_RUN = '01936b2e-0000-7a1e-8d3c-52b1f0e4a7c3';

beforeAll(assertBuilt);
const sandbox = useSandbox({ port: 0, stores: 3, zones: 2, days: 6, seed: 9, clientId: 'facets-client', ...servingDaysInProgress(CLOCK) });
let lineage: LineageServer;
afterEach(async () => {
  await lineage?.close();
});

interface Facets {
  [name: string]: Record<string, unknown> | undefined;
}
interface Event {
  eventType: string;
  run: { runId: string; facets: Facets };
  job: { namespace: string; name: string; facets: Facets };
  outputs: { name: string; facets: Facets; outputFacets?: Facets }[];
}

/** The events the server got, each first checked against the spec's schemas, facets included. */
function events(): Event[] {
  for (const { body } of lineage.received) expect(openLineageErrors(body)).toEqual([]);
  return lineage.received.map(({ body }) => body as unknown as Event);
}

async function run(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  lineage = await startLineageServer();
  return runCli([...args, '--base-url', sandbox().url, '--client-id', sandbox().clientId], {
    env: { OPENLINEAGE_URL: lineage.url, ...SECRET_ENV, ...env },
  });
}

describe('OpenLineage facets', () => {
  it('a catch-up started by an Airflow task: its job type, nominal time, engine, parent and root, storage and the partitions written', async () => {
    const out = await tempDir();
    const first = await run(['all', '--date', daysAgo(4), '-o', out, '--layout', 'hive', '-f', 'parquet'], {});
    expect(first.code, first.stderr).toBe(0);
    const result = await run(['all', '--catch-up', '-o', out], {
      OPENLINEAGE_PARENT_ID: `airflow/area_metrics_nightly.import/${PARENT_RUN}`,
      OPENLINEAGE_ROOT_PARENT_ID: `airflow/area_metrics_nightly/${ROOT_RUN}`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('warn: ') && !line.includes('not over'))).toEqual([]);
    const [start, complete] = events();
    expect([start!.eventType, complete!.eventType]).toEqual(['START', 'COMPLETE']);

    // The catch-up is its own job, apart from a backfill of named days.
    expect(complete!.job.name).toBe('all.catch-up');
    expect(complete!.job.facets.jobType).toMatchObject({ processingType: 'BATCH', integration: 'AREA_METRICS', jobType: 'JOB' });
    const manifest = await latestManifest(out);
    const days = [...new Set(manifest.units.map((unit) => unit.day))].sort();
    expect(days).toEqual([daysAgo(3), daysAgo(2), daysAgo(1)]);
    for (const event of [start!, complete!]) {
      expect(event.run.facets.nominalTime).toMatchObject({
        nominalStartTime: `${daysAgo(3)}T00:00:00Z`,
        nominalEndTime: `${daysAgo(0)}T00:00:00Z`,
      });
      expect(event.run.facets.parent).toMatchObject({
        run: { runId: PARENT_RUN },
        job: { namespace: 'airflow', name: 'area_metrics_nightly.import' },
        root: { run: { runId: ROOT_RUN }, job: { namespace: 'airflow', name: 'area_metrics_nightly' } },
      });
      expect(event.run.facets.processing_engine).toMatchObject({ name: 'area-metrics', version: VERSION });
    }
    const traffic = complete!.outputs.find((output) => output.name === join(out, 'metric=traffic'))!;
    expect(traffic.facets.storage).toMatchObject({ storageLayer: 'file', fileFormat: 'parquet' });
    // The partitions are those the run wrote a file in, as the manifest lists them.
    const written = manifest.units.filter((unit) => unit.metric === 'traffic' && unit.path !== null).map((unit) => unit.day);
    expect(traffic.outputFacets?.subset).toMatchObject({
      outputCondition: {
        type: 'partition',
        partitions: written.map((dt) => ({ identifier: `metric=traffic/dt=${dt}`, dimensions: { metric: 'traffic', dt } })),
      },
    });
    expect(traffic.facets.partitioning).toMatchObject({
      dimensions: [{ fields: ['metric'] }, { fields: ['dt'] }],
      partitions: written.map((dt) => ({ identifier: `metric=traffic/dt=${dt}`, dimensions: { metric: 'traffic', dt } })),
    });
    expect(start!.outputs.every((output) => output.outputFacets === undefined)).toBe(true);
    // START names the partition columns, not yet what was written.
    expect(start!.outputs[0]!.facets.partitioning).toMatchObject({ dimensions: [{ fields: ['metric'] }, { fields: ['dt'] }] });
    expect(start!.outputs[0]!.facets.partitioning).not.toHaveProperty('partitions');
  });

  it('a malformed parent is one warning and no parent facet; the run imports and its events still validate', async () => {
    const out = await tempDir();
    const result = await run(['traffic', '--date', daysAgo(2), '-o', out], { OPENLINEAGE_PARENT_ID: 'airflow/not-a-run-id' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('warn: '))).toEqual([
      'warn: OPENLINEAGE_PARENT_ID is not <namespace>/<job>/<run id> (a UUID): the lineage events name no parent run',
    ]);
    const [start, complete] = events();
    expect(complete!.run.facets.parent).toBeUndefined();
    expect(start!.job.name).toBe('traffic.backfill');
    // A flat folder has no partitions to name; its storage still says the format.
    expect(complete!.outputs[0]!.outputFacets?.subset).toBeUndefined();
    expect(complete!.outputs[0]!.facets.partitioning).toBeUndefined();
    expect(complete!.outputs[0]!.facets.storage).toMatchObject({ storageLayer: 'file', fileFormat: 'csv' });
  });
});
