// Object storage benchmark: the same `all` import into a folder and into a bucket (s3rver on loopback, file-backed),
// interleaved, median of N rounds; then the re-run into the bucket, where every object is unchanged (HEADs only).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { againstFolder, importInto, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const BUCKET = 'area-metrics-bench';

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
  try {
    log(`object store: warm-up import of ${window.from}..${window.to}`);
    const warm = await tempDir('s3-warm');
    await importInto(window, warm, {});
    await rm(warm, { recursive: true, force: true });
    const place = (/** @type {number} */ round) => `s3://${BUCKET}/round-${round}`;
    return { window, ...(await againstFolder({ rounds, log, window, name: 'bucket', place, env: s3Env })) };
  } finally {
    await sandbox.stop();
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
}
