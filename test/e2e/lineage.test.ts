/**
 * OpenLineage run events: the command line (run in this process) against the sandbox posts them to a loopback
 * stand-in for Marquez, and each is checked against the spec's own JSON schemas (test/fixtures/openlineage). A failed
 * run ends with FAIL, an interrupted one with ABORT; a lineage server that is down costs one warning and never fails
 * the run.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, waitUntil, type CliResult } from '../helpers/cli.js';
import { startLineageServer, type LineageServer } from '../helpers/lineage-server.js';
import { openLineageErrors } from '../helpers/openlineage.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { VENDOR_SECRET, useSandbox } from '../helpers/vendor.js';
import { listFiles, useTempDirs } from '../helpers/tmp.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const API_KEY = 'Marquez-Api-Key-4c1d';
const CLOCK = noonToday();
const { runCli, startInProcess } = clockedCli(CLOCK);
const tempDir = useTempDirs('lineage-e2e-');
const daysAgo = daysBefore(CLOCK);
const METRICS = METRIC_NAMES;

beforeAll(assertBuilt);
const sandbox = useSandbox({ port: 0, stores: 3, zones: 2, days: 6, seed: 3, clientId: 'lineage-client', ...servingDaysInProgress(CLOCK) });
let lineage: LineageServer;
afterEach(async () => {
  await lineage?.close();
});

const api = (): string[] => ['--base-url', sandbox().url, '--client-id', sandbox().clientId];
/** The secret as a cron job passes it: in the environment (a flag would be warned about). */
const secretEnv = (secret = VENDOR_SECRET): Record<string, string> => ({ AREA_METRICS_CLIENT_SECRET: secret });

interface Dataset {
  namespace: string;
  name: string;
  facets: { schema?: { fields: { name: string; type: string }[] } };
  outputFacets?: { outputStatistics: { rowCount: number; size: number; fileCount: number } };
}
interface Event {
  eventType: string;
  run: { runId: string; facets: { errorMessage?: { message: string } } };
  job: { namespace: string; name: string };
  inputs: Dataset[];
  outputs: Dataset[];
}

/** The events the server got, each first checked against the spec's schemas. */
function events(): Event[] {
  for (const { body } of lineage.received) expect(openLineageErrors(body)).toEqual([]);
  return lineage.received.map(({ body }) => body as unknown as Event);
}

function warnings(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line.startsWith('warn: '));
}

describe('OpenLineage events', () => {
  it("a run posts START then COMPLETE with the same run id (the manifest's): inputs, outputs, schema and statistics", async () => {
    lineage = await startLineageServer();
    const out = await tempDir();
    const result = await runCli(
      ['all', '--from', daysAgo(3), '--to', daysAgo(2), '-o', out, '--layout', 'hive', '-f', 'parquet', ...api()],
      {
        env: { OPENLINEAGE_URL: lineage.url, OPENLINEAGE_API_KEY: API_KEY, ...secretEnv() },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([]);
    expect(result.rawStderr).not.toContain(API_KEY);
    const [start, complete] = events();
    expect(lineage.received.map(({ path, headers }) => [path, headers.authorization])).toEqual([
      ['/api/v1/lineage', `Bearer ${API_KEY}`],
      ['/api/v1/lineage', `Bearer ${API_KEY}`],
    ]);
    expect([start!.eventType, complete!.eventType]).toEqual(['START', 'COMPLETE']);
    const [manifestName] = await listFiles(join(out, '_runs'));
    const manifest = JSON.parse(await readFile(join(out, '_runs', manifestName!), 'utf8')) as {
      runId: string;
      units: { metric: string; rows: number; bytes: number }[];
    };
    expect(start!.run.runId).toBe(manifest.runId);
    expect(complete!.run.runId).toBe(manifest.runId);
    expect(complete!.job).toMatchObject({ namespace: 'area-metrics', name: 'all.backfill' });
    expect(complete!.inputs.map(({ namespace, name }) => [namespace, name])).toEqual(
      METRICS.map((metric) => [sandbox().url, `/api/bi/area-metrics/${metric}/`]),
    );
    expect(complete!.outputs.map(({ namespace, name }) => [namespace, name])).toEqual(
      METRICS.map((metric) => ['file', join(out, `metric=${metric}`)]),
    );
    const traffic = complete!.outputs[2]!;
    expect(traffic.facets.schema?.fields.map(({ name }) => name)).toEqual([
      'store_code',
      'date',
      'day',
      'granularity',
      'zone',
      'traffic_pct',
    ]);
    for (const [index, metric] of METRICS.entries()) {
      const units = manifest.units.filter((unit) => unit.metric === metric);
      expect(complete!.outputs[index]!.outputFacets?.outputStatistics).toMatchObject({
        rowCount: units.reduce((sum, unit) => sum + unit.rows, 0),
        size: units.reduce((sum, unit) => sum + unit.bytes, 0),
        fileCount: 2,
      });
    }
    // The statistics come when the run is over.
    expect(start!.outputs.every((output) => output.outputFacets === undefined)).toBe(true);
  });

  it('a failed run ends with FAIL carrying its error message; --openlineage-url and OPENLINEAGE_NAMESPACE are taken', async () => {
    lineage = await startLineageServer();
    const result = await runCli(['traffic', '--date', daysAgo(2), '-o', await tempDir(), '--openlineage-url', lineage.url, ...api()], {
      env: { OPENLINEAGE_NAMESPACE: 'nightly', ...secretEnv('wrong-secret') },
    });
    expect(result.code, result.stderr).toBe(3);
    const [start, fail] = events();
    expect([start!.eventType, fail!.eventType]).toEqual(['START', 'FAIL']);
    expect(fail!.run.runId).toBe(start!.run.runId);
    expect(fail!.job).toMatchObject({ namespace: 'nightly', name: 'traffic.backfill' });
    expect(fail!.run.facets.errorMessage?.message).toMatch(/^traffic .*401/);
    expect(JSON.stringify(lineage.received)).not.toContain('wrong-secret');
  });

  it('an interrupted run ends with ABORT', async () => {
    lineage = await startLineageServer();
    sandbox().setFaults({ latencyMs: 10_000 });
    const cli = startInProcess(['traffic', '--date', daysAgo(2), '-o', await tempDir(), ...api()], {
      env: { OPENLINEAGE_URL: lineage.url, ...secretEnv() },
    });
    await waitUntil(() => lineage.received.length === 1 && sandbox().requests.length > 0, 'the START event and the first request');
    cli.kill('SIGTERM');
    const result = await cli.done;
    expect(result.code, result.stderr).toBe(143);
    expect(events().map((event) => event.eventType)).toEqual(['START', 'ABORT']);
  });

  it('a lineage server that is down costs one warning: the run imports and exits 0', async () => {
    lineage = await startLineageServer();
    const url = lineage.url;
    await lineage.close();
    const out = await tempDir();
    const result = await runCli(['traffic', '--date', daysAgo(2), '-o', out, ...api()], {
      env: { OPENLINEAGE_URL: url, OPENLINEAGE_API_KEY: API_KEY, ...secretEnv() },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([
      expect.stringMatching(
        /^warn: OpenLineage: cannot post the START event to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/lineage: ECONNREFUSED; the import goes on/,
      ),
    ]);
    expect(result.stderr).toMatch(/imported 1 of 1 units/);
    expect(await listFiles(out)).toContain(`traffic/${daysAgo(2)}.csv`);
    expect(result.rawStderr).not.toContain(API_KEY);
  });
});
