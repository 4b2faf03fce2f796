import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import { ObjectSink } from '../../src/output/object-sink.js';
import type { UnitContent } from '../../src/output/sinks.js';
import { useS3Store } from '../helpers/s3.js';

const { s3, store } = useS3Store();
beforeEach(() => {
  s3.requests.length = 0;
  s3.faults.answerAll = undefined;
});

const metric = METRICS.traffic;

function unit(rows: string[], rejected: UnitContent['rejected'] = [], storeCode?: string): UnitContent {
  return {
    unit: { metric, day: '2026-11-20', ...(storeCode === undefined ? {} : { storeCode }) },
    header: 'store_code,zone\n',
    pieces: rows.map((row) => Buffer.from(row)),
    rejected,
  };
}

describe('ObjectSink', () => {
  it('writes the folder layout as keys under the prefix, header then pieces', async () => {
    const sink = new ObjectSink(store, { bucket: s3.bucket, prefix: 'layout/nightly' }, { format: 'csv', shape: 'rows' });
    const body = 'store_code,zone\nS1,a\nS2,b\n';
    // The SHA-256 reported (for the run manifest) is the one the object's metadata keeps.
    const sha256 = createHash('sha256').update(body).digest('hex');
    expect(await sink.commit(unit(['S1,a\n', 'S2,b\n']))).toEqual({
      changed: true,
      path: `s3://${s3.bucket}/layout/nightly/traffic/2026-11-20.csv`,
      file: { path: 'traffic/2026-11-20.csv', bytes: body.length, sha256 },
    });
    expect((await s3.head('layout/nightly/traffic/2026-11-20.csv'))?.metadata).toMatchObject({ 'area-metrics-sha256': sha256 });
    await sink.commit(unit(['S1,a\n'], [], 'A/B'));
    expect([...(await s3.objects('layout/nightly')).entries()].map(([key, body]) => [key, body.toString()])).toEqual([
      ['traffic/2026-11-20.csv', 'store_code,zone\nS1,a\nS2,b\n'],
      ['traffic/2026-11-20.store-A%2FB.csv', 'store_code,zone\nS1,a\n'],
    ]);
    expect(sink.describe(unit([]))).toBe(`s3://${s3.bucket}/layout/nightly/traffic/2026-11-20.csv`);
  });

  it('writes the hive layout as keys under the prefix, set-aside records under _rejected/ alike', async () => {
    const sink = new ObjectSink(store, { bucket: s3.bucket, prefix: 'hive' }, { format: 'csv', shape: 'rows' }, 'hive');
    const rejected = [{ field: 'traffic_pct', value: '2', reason: 'above 1', record: { store_code: 'S9' } }];
    expect(await sink.commit(unit(['S1,a\n'], rejected))).toMatchObject({
      file: { path: 'metric=traffic/dt=2026-11-20/traffic_2026-11-20.csv' },
    });
    expect([...(await s3.objects('hive')).keys()]).toEqual([
      '_rejected/metric=traffic/dt=2026-11-20/traffic_2026-11-20.ndjson',
      'metric=traffic/dt=2026-11-20/traffic_2026-11-20.csv',
    ]);
  });

  it('reports an object that already holds the same bytes as unchanged and sends no PUT', async () => {
    const sink = new ObjectSink(store, { bucket: s3.bucket, prefix: 'same' }, { format: 'csv', shape: 'rows' });
    await sink.commit(unit(['S1,a\n']));
    s3.requests.length = 0;
    expect(await sink.commit(unit(['S1,a\n']))).toMatchObject({ changed: false });
    expect(s3.requests.filter((request) => request.method === 'PUT')).toEqual([]);
  });

  it('keeps set-aside records under _rejected/, and removes them when a later run finds the day clean', async () => {
    const sink = new ObjectSink(store, { bucket: s3.bucket, prefix: 'rejects' }, { format: 'ndjson', shape: 'rows' });
    await sink.commit(unit(['{"a":1}\n'], [{ field: 'zone', value: '', reason: 'empty zone', record: { zone: '' } }]));
    const rejected = await s3.read('rejects/_rejected/traffic/2026-11-20.ndjson');
    expect(JSON.parse(rejected!.toString())).toMatchObject({ metric: 'traffic', day: '2026-11-20', field: 'zone', reason: 'empty zone' });
    await sink.commit(unit(['{"a":1}\n']));
    expect(await s3.read('rejects/_rejected/traffic/2026-11-20.ndjson')).toBeUndefined();
    expect([...(await s3.objects('rejects')).keys()]).toEqual(['traffic/2026-11-20.ndjson']);
  });

  it('works without s3:ListBucket (every HEAD refused): writes each unit, and leaves _rejected/ as it is', async () => {
    const sink = new ObjectSink(store, { bucket: s3.bucket, prefix: 'no-list' }, { format: 'csv', shape: 'rows' });
    s3.faults.answerAll = { status: 403, code: 'AccessDenied', message: 'Access Denied', methods: ['HEAD'] };
    expect(await sink.commit(unit(['S1,a\n']))).toMatchObject({ changed: true });
    expect(await sink.commit(unit(['S1,a\n']))).toMatchObject({ changed: true });
    s3.faults.answerAll = undefined;
    expect((await s3.read('no-list/traffic/2026-11-20.csv'))?.toString()).toBe('store_code,zone\nS1,a\n');
    expect(s3.requests.filter((request) => request.method === 'DELETE')).toEqual([]);
  });
});
