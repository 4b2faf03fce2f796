// Object storage benchmark: the same `all` import into a folder and into a bucket (s3rver on loopback, file-backed),
// interleaved, median of N rounds; then the re-run into the bucket, where every object is unchanged (HEADs only).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { importInto, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const BUCKET = 'area-metrics-bench';
/** @typedef {import('./lib.mjs').ImportRun} ImportRun */

/** @param {{ rounds: number, log: (line: string) => void }} options */
export async function objectStoreBenchmark({ rounds, log }) {
  const directory = await mkdtemp(join(tmpdir(), 'area-metrics-bench-s3rver-'));
  const store = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const { port } = await store.run();
  const s3Env = {
    AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AREA_METRICS_S3_FORCE_PATH_STYLE: '1',
  };
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
  const window = { baseUrl: sandbox.url, from: utcDay(-7), to: utcDay(-1) };
  /** @type {{ folder: ImportRun[], bucket: ImportRun[], rerun: ImportRun[] }} */
  const samples = { folder: [], bucket: [], rerun: [] };
  try {
    log(`object store: warm-up import of ${window.from}..${window.to}`);
    const warm = await tempDir('s3-warm');
    await importInto(window, warm, {});
    await rm(warm, { recursive: true, force: true });
    for (let round = 1; round <= rounds; round++) {
      const folder = await tempDir('s3-folder');
      try {
        samples.folder.push(await importInto(window, folder, {}));
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
      const prefix = `s3://${BUCKET}/round-${round}`;
      samples.bucket.push(await importInto(window, prefix, s3Env));
      const rerun = await importInto(window, prefix, s3Env);
      // Every object of the re-run already holds its bytes: nothing may be written again.
      if (rerun.unchanged !== rerun.units)
        throw new Error(`the re-run into ${prefix} rewrote ${rerun.units - rerun.unchanged} of ${rerun.units} units`);
      samples.rerun.push(rerun);
      const wall = (/** @type {ImportRun[]} */ runs) => ((runs.at(-1)?.wallMs ?? Number.NaN) / 1000).toFixed(2);
      log(
        `round ${round}/${rounds}: folder ${wall(samples.folder)} s, bucket ${wall(samples.bucket)} s, bucket re-run ${wall(samples.rerun)} s`,
      );
    }
  } finally {
    await sandbox.stop();
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
  const summarize = (/** @type {ImportRun[]} */ runs) => ({
    wallMs: median(runs.map((run) => run.wallMs)),
    cpuSeconds: median(runs.map((run) => run.cpuSeconds)),
    maxRssKb: median(runs.map((run) => run.maxRssKb)),
    rows: runs[0]?.rows,
    unchanged: runs[0]?.unchanged,
  });
  return { window, folder: summarize(samples.folder), bucket: summarize(samples.bucket), rerun: summarize(samples.rerun) };
}
