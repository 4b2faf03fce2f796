import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/output/object-store.js';
import { BucketManifests, newRunId, RunManifestBuilder, saveManifest } from '../../src/output/run-manifest.js';
import { startS3, storeConfig, type S3Harness } from '../helpers/s3.js';

let s3: S3Harness;
let store: ObjectStore;
beforeAll(async () => {
  s3 = await startS3();
  store = ObjectStore.create(s3.bucket, storeConfig(s3));
});
afterAll(async () => {
  store.close();
  await s3.close();
});

const manifestOf = (runId: string) =>
  new RunManifestBuilder(
    { runId, version: '0.1.0', command: 'all', start: new Date(), layout: 'flat', format: 'csv', days: 'utc' },
    [],
  ).build({ end: new Date(), exitCode: 0, notAttempted: '' });

describe('run manifests in a bucket', () => {
  it('are one PUT each under <prefix>/_runs/, the oldest beyond the kept number removed, other keys left alone', async () => {
    const shelf = new BucketManifests(store, { bucket: s3.bucket, prefix: 'lake/nightly' });
    const ids = [1, 2, 3].map((minute) => newRunId(Date.parse('2026-11-01T00:00:00Z') + minute * 60_000));
    for (const id of ids) await saveManifest(shelf, manifestOf(id), 10);
    await store.writeIfChanged('lake/nightly/_runs/README.txt', Buffer.from('mine'));
    await store.writeIfChanged('lake/nightly/_runs/sub/old.json', Buffer.from('{}'));
    const newest = newRunId(Date.parse('2026-11-02T00:00:00Z'));
    s3.requests.length = 0;
    const saved = await saveManifest(shelf, manifestOf(newest), 2);
    expect(saved).toEqual({ location: `s3://${s3.bucket}/lake/nightly/_runs/${newest}.json`, pruned: 2 });
    expect([...(await s3.objects('lake/nightly/_runs')).keys()].sort()).toEqual(
      ['README.txt', `${ids[2]}.json`, `${newest}.json`, 'sub/old.json'].sort(),
    );
    expect(JSON.parse((await s3.read(`lake/nightly/_runs/${newest}.json`))!.toString())).toMatchObject({ runId: newest });
    expect(s3.requests.filter((request) => request.method === 'PUT').map((request) => request.key)).toEqual([
      `lake/nightly/_runs/${newest}.json`,
    ]);
  });

  it('a store that refuses the listing (no s3:ListBucket) keeps the new manifest and says why the old stay', async () => {
    const shelf = new BucketManifests(store, { bucket: s3.bucket, prefix: 'refused' });
    s3.faults.answerAll = { status: 403, code: 'AccessDenied', message: 'Access Denied', methods: ['GET'] };
    try {
      const id = newRunId();
      const saved = await saveManifest(shelf, manifestOf(id));
      expect(saved.pruned).toBe(0);
      expect(String(saved.pruneError)).toMatch(/AccessDenied/);
    } finally {
      s3.faults.answerAll = undefined;
    }
    expect((await s3.objects('refused/_runs')).size).toBe(1);
  });
});
