import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/output/object-store.js';
import {
  BucketManifests,
  manifestName,
  newRunId,
  NumberedManifests,
  RunManifestBuilder,
  saveManifest,
} from '../../src/output/run-manifest.js';
import { listingTogether } from '../helpers/manifests.js';
import { storeConfig, useS3Store } from '../helpers/s3.js';

const { s3, store } = useS3Store();

const manifestOf = (runId: string) =>
  new RunManifestBuilder(
    { runId, version: '0.1.0', command: 'all', start: new Date(), layout: 'flat', format: 'csv', days: 'utc' },
    [],
  ).build({ end: new Date(), exitCode: 0, notAttempted: '' });

const shelfAt = (prefix: string, on: ObjectStore = store) => new NumberedManifests(new BucketManifests(on, { bucket: s3.bucket, prefix }));

describe('run manifests in a bucket', () => {
  it('are one PUT each, If-None-Match: *, numbered after the run-id names of earlier releases; the oldest beyond the kept number removed', async () => {
    const old = newRunId();
    await store.writeIfChanged(`lake/nightly/_runs/${old}.json`, Buffer.from('{}'));
    await store.writeIfChanged('lake/nightly/_runs/README.txt', Buffer.from('mine'));
    await store.writeIfChanged('lake/nightly/_runs/sub/old.json', Buffer.from('{}'));
    for (let run = 0; run < 2; run++) await saveManifest(shelfAt('lake/nightly'), manifestOf(newRunId()), 10);
    const newest = newRunId();
    s3.requests.length = 0;
    const saved = await saveManifest(shelfAt('lake/nightly'), manifestOf(newest), 2);
    expect(saved).toEqual({ location: `s3://${s3.bucket}/lake/nightly/_runs/seq-000000000003.json`, pruned: 2 });
    expect([...(await s3.objects('lake/nightly/_runs')).keys()].sort()).toEqual(
      ['README.txt', 'seq-000000000002.json', 'seq-000000000003.json', 'sub/old.json'].sort(),
    );
    expect(JSON.parse((await s3.read('lake/nightly/_runs/seq-000000000003.json'))!.toString())).toMatchObject({ runId: newest });
    const puts = s3.requests.filter((request) => request.method === 'PUT');
    expect(puts.map((request) => [request.key, request.headers['if-none-match']])).toEqual([
      ['lake/nightly/_runs/seq-000000000003.json', '*'],
    ]);
  });

  it('writers racing for one number, each with its own client: the store gives each key once, every manifest kept under a number of its own', async () => {
    const writers = 8;
    const stores = Array.from({ length: writers }, () => ObjectStore.create(s3.bucket, storeConfig(s3)));
    // Every writer lists before any creates: all aim at number 1.
    const together = listingTogether(writers);
    const racing = (on: ObjectStore): NumberedManifests =>
      new NumberedManifests(together(new BucketManifests(on, { bucket: s3.bucket, prefix: 'race' })));
    try {
      const ids = Array.from({ length: writers }, () => newRunId());
      const saved = await Promise.all(ids.map((id, index) => saveManifest(racing(stores[index]!), manifestOf(id))));
      const expected = Array.from({ length: writers }, (_, index) => manifestName(index + 1));
      expect(saved.map((entry) => entry.location.split('/').at(-1)).sort()).toEqual(expected);
      const objects = await s3.objects('race/_runs');
      expect([...objects.keys()].sort()).toEqual(expected);
      expect([...objects.values()].map((body) => (JSON.parse(body.toString()) as { runId: string }).runId).sort()).toEqual([...ids].sort());
      // Lost races are the store's 412s, not overwrites.
      expect(s3.requests.filter((request) => request.key.startsWith('race/') && request.status === 412).length).toBeGreaterThan(0);
    } finally {
      for (const each of stores) each.close();
    }
  });

  it('a PUT that landed and is sent again (an SDK retry) finds its own bytes: published once, under its number', async () => {
    const folder = new BucketManifests(store, { bucket: s3.bucket, prefix: 'retry' });
    expect(await folder.create(manifestName(1), '{"a":1}\n')).toBe(true);
    expect(await folder.create(manifestName(1), '{"a":1}\n')).toBe(true);
    expect(await folder.create(manifestName(1), '{"a":2}\n')).toBe(false);
    expect((await s3.read('retry/_runs/seq-000000000001.json'))!.toString()).toBe('{"a":1}\n');
  });

  it('a store that refuses the listing (no s3:ListBucket) cannot number a manifest: the refusal named, nothing written', async () => {
    s3.faults.answerAll = { status: 403, code: 'AccessDenied', message: 'Access Denied', methods: ['GET'] };
    try {
      await expect(saveManifest(shelfAt('refused'), manifestOf(newRunId()))).rejects.toThrow(/refused\/_runs\/.*AccessDenied/);
    } finally {
      s3.faults.answerAll = undefined;
    }
    expect((await s3.objects('refused/_runs')).size).toBe(0);
  });
});
