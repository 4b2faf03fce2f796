/**
 * Run manifests in the order they appeared, with runs that overlap (in this process): a slow `unique-users
 * --catch-up` held mid-run by the vendor, a `reopen` and a second import (`traffic --catch-up`) done meanwhile, and
 * the loader of docs/import.md run between them, into a folder, a bucket (s3rver) and PostgreSQL. Each final unit is
 * loaded as often as the manifests tell it to be, none missed: the same loads as one pass over every manifest at
 * the end, and the stored bytes' SHA-256 for each unit's last load.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stopAllClis, waitUntil } from '../helpers/cli.js';
import { startCraftedProxy, type CraftedProxy } from '../helpers/crafted-server.js';
import {
  bucketManifests,
  databaseManifests,
  folderManifests,
  ManifestLoader,
  runDocsShellLoader,
  type LoadedUnit,
  type ManifestSource,
} from '../helpers/manifests.js';
import { usePostgres, warnIfPostgresMissing } from '../helpers/postgres.js';
import { useS3 } from '../helpers/s3.js';
import { useStoppedSandbox } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

// The sandbox serves days still running (yesterday's UTC window holds some until 23:00Z): day 1 is not over.
const { daysAgo, sandbox, startInProcess } = useStoppedSandbox({
  stores: 3,
  zones: 2,
  days: 10,
  seed: 23,
  clientId: 'order-client',
  serveInProgress: true,
});
const tempDir = useTempDirs('manifest-order-e2e-');
const skipPostgres = warnIfPostgresMissing('the PostgreSQL case of the manifest order tests');

let proxy: CraftedProxy;
beforeAll(async () => {
  proxy = await startCraftedProxy({ kind: 'tunnel' });
});
afterEach(async () => {
  proxy.release();
  await stopAllClis();
});
afterAll(async () => {
  await proxy.close();
});

/** An output and how to read it back: where the run writes, its environment, the docs' loader, each unit's stored SHA-256. */
interface Place {
  readonly output: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Imports into it wait for one another (a database's run lock) rather than overlap. */
  readonly oneRunAtATime: boolean;
  source(): Promise<ManifestSource>;
  /** The SHA-256 of a unit as stored now (its file, object or rows). */
  storedSha256(unit: LoadedUnit): Promise<string | undefined>;
  /** The docs' shell loop, run beside the loader at each poll: the paths it loaded so far (undefined without bash and jq). */
  readonly shellLoop?: () => Promise<readonly string[] | undefined>;
  /** A loaded unit's path as the shell loop names it. */
  readonly shellPath?: (unit: LoadedUnit) => string;
}

const api = () => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
const sha256Of = (bytes: Buffer | undefined) => bytes && createHash('sha256').update(bytes).digest('hex');
const unitKey = (unit: Pick<LoadedUnit, 'metric' | 'day'>) => `${unit.metric} ${unit.day}`;

/**
 * The night: days 7..5 imported and loaded; then `unique-users --catch-up` (days 4..1) starts, and once its first
 * unit is in, the vendor stops answering it; meanwhile `reopen traffic` of day 6 and `traffic --catch-up` (day 6
 * again, days 4..1) run, the loader between each; then the vendor answers again and the catch-up ends, last.
 */
async function overlappingNight(place: Place): Promise<void> {
  const run = (args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}) =>
    startInProcess([...args, '-o', place.output], { env: { ...place.env, ...env }, timeoutMs: 90_000 });
  const docsLoader = new ManifestLoader(await place.source());
  let shellLoads: readonly string[] | undefined;
  // The loader polls with the docs' own shell loop beside it, where there is one.
  const loader = {
    poll: async () => {
      await docsLoader.poll();
      shellLoads = await place.shellLoop?.();
    },
    get loaded() {
      return docsLoader.loaded;
    },
    get read() {
      return docsLoader.read;
    },
  };

  const setup = await run(['all', '--from', daysAgo(7), '--to', daysAgo(5), ...api()]).done;
  expect(setup.code, setup.stderr).toBe(0);
  await loader.poll();

  // Each request takes 300 ms, so the catch-up is held between two units, not after its last: three are left when
  // its first is in, and the hold comes within a poll (20 ms).
  sandbox.setFaults({ latencyMs: 300 });
  const slow = run(['unique-users', '--catch-up', '--concurrency', '1', ...api()], { HTTP_PROXY: proxy.hostPort });
  let slowEnded = false;
  void slow.done.finally(() => (slowEnded = true));
  await waitUntil(() => / rows from /.test(slow.stderr()), "the catch-up's first unit", 30_000);
  proxy.hold();

  const reopened = await run(['reopen', 'traffic', '--date', daysAgo(6)]).done;
  expect(reopened.code, reopened.stderr).toBe(0);
  await loader.poll();
  const second = run(['traffic', '--catch-up', ...api()]);
  if (place.oneRunAtATime) {
    await waitUntil(() => /is writing to/.test(second.stderr()), 'the second import waiting for the first', 30_000);
  } else {
    const result = await second.done;
    expect(result.code, result.stderr).toBe(0);
  }
  await loader.poll();
  // The overlap happened: the catch-up, started before both, has not ended.
  expect(slowEnded).toBe(false);

  proxy.release();
  const ended = await slow.done;
  expect(ended.code, ended.stderr).toBe(0);
  expect((await second.done).code).toBe(0);
  await loader.poll();

  // One pass over every manifest at the end loads the same, in the same order: nothing was skipped between runs.
  const oneShot = new ManifestLoader(await place.source());
  await oneShot.poll();
  expect(loader.loaded).toEqual(oneShot.loaded);
  expect(new Set(loader.read).size).toBe(loader.read.length);

  // Each day's loads, counted from what the commands did (not from the manifests): the first import's 9 days once,
  // traffic's day 6 again when the second import made it final after the reopen, days 4..2 of unique-users (the
  // catch-up, published last) and traffic (the second import) once; day 1 is not over, so not final.
  const counts = new Map<string, number>();
  for (const unit of loader.loaded) counts.set(unitKey(unit), (counts.get(unitKey(unit)) ?? 0) + 1);
  const expected = new Map<string, number>();
  for (const metric of ['unique-users', 'avg-screen-time', 'traffic'])
    for (const day of [7, 6, 5]) expected.set(`${metric} ${daysAgo(day)}`, 1);
  expected.set(`traffic ${daysAgo(6)}`, 2);
  for (const metric of ['unique-users', 'traffic']) for (const day of [4, 3, 2]) expected.set(`${metric} ${daysAgo(day)}`, 1);
  expect(new Map([...counts].sort())).toEqual(new Map([...expected].sort()));

  if (shellLoads !== undefined && place.shellPath !== undefined) expect(shellLoads).toEqual(loader.loaded.map(place.shellPath));

  // What was loaded last for each unit is what is stored now.
  const last = new Map(loader.loaded.map((unit) => [unitKey(unit), unit]));
  for (const unit of last.values()) expect(await place.storedSha256(unit), unitKey(unit)).toBe(unit.sha256);
}

describe('run manifests with runs that overlap: the docs’ loader misses none', () => {
  it('a folder; the docs’ jq loop too', async () => {
    const out = await tempDir();
    const loaderHome = await tempDir();
    await overlappingNight({
      output: out,
      env: {},
      oneRunAtATime: false,
      source: () => Promise.resolve(folderManifests(out)),
      storedSha256: async (unit) => sha256Of(await readFile(join(out, unit.path!))),
      shellLoop: () => runDocsShellLoader(out, loaderHome),
      shellPath: (unit) => join(out, unit.path!),
    });
  }, 120_000);

  describe('a bucket (s3rver)', () => {
    const s3 = useS3();

    it('conditional writes enforced, as S3 does', async () => {
      await overlappingNight({
        output: `s3://${s3.bucket}/night`,
        env: s3.env(),
        oneRunAtATime: false,
        source: () => Promise.resolve(bucketManifests(() => s3.objects('night/_runs'))),
        storedSha256: async (unit) => sha256Of(await s3.read(`night/${unit.path}`)),
      });
    }, 120_000);
  });

  describe.skipIf(skipPostgres)('PostgreSQL', () => {
    const server = usePostgres();

    it('the imports wait for one another; the reopen does not', async () => {
      await server.query('CREATE DATABASE night');
      const schema = 'area_metrics';
      const query = async (sql: string, values: unknown[]) => server.query(sql, values, 'night');
      await overlappingNight({
        output: server.url({ database: 'night', params: { schema } }),
        env: {},
        oneRunAtATime: true,
        source: () => databaseManifests(query, schema),
        storedSha256: async (unit) =>
          (
            await query(`SELECT sha256 FROM ${schema}.area_metrics_units WHERE metric = $1 AND day = $2 AND store = ''`, [
              unit.metric,
              unit.day,
            ])
          )[0]?.sha256 as string | undefined,
      });
    }, 120_000);
  });
});
