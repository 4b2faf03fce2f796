import { createHash } from 'node:crypto';
import { readFile, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import { FileSink, unitFileName, type UnitContent } from '../../src/output/sinks.js';
import { useTempDirs } from '../helpers/tmp.js';

const metric = METRICS['unique-users'];

describe('unitFileName', () => {
  it('names a store unit by its URL-encoded code', () => {
    expect(unitFileName({ metric, day: '2026-03-10' }, 'csv')).toBe('2026-03-10.csv');
    expect(unitFileName({ metric, day: '2026-03-10', storeCode: 'A/B 1' }, 'csv')).toBe('2026-03-10.store-A%2FB%201.csv');
  });

  it.each([
    ['240 ASCII characters', 'S'.repeat(240)],
    ['21 CJK characters, 189 once URL-encoded', '店'.repeat(21)],
  ])('names a code too long for a file name (%s) by its SHA-256, within 255 bytes with the temp suffix', (_what, code) => {
    const name = unitFileName({ metric, day: '2026-03-10', storeCode: code }, 'ndjson');
    expect(name).toBe(`2026-03-10.store-sha256-${createHash('sha256').update(code).digest('hex')}.ndjson`);
    // atomic-file writes `.<name>.<pid>.<8 hex>.tmp` next to it first.
    expect(Buffer.byteLength(`.${name}.4194304.deadbeef.tmp`)).toBeLessThanOrEqual(255);
  });

  it('keeps the readable name up to 180 encoded characters', () => {
    const code = 'S'.repeat(180);
    expect(unitFileName({ metric, day: '2026-03-10', storeCode: code }, 'ndjson')).toBe(`2026-03-10.store-${code}.ndjson`);
  });
});

describe('FileSink and unchanged files', () => {
  const tempDir = useTempDirs('sinks-');
  const unitData = (text: string): UnitContent => ({
    unit: { metric, day: '2026-03-10' },
    header: 'h\n',
    pieces: [Buffer.from(text)],
    rejected: [],
  });

  /** What the sink must report of the file: its path under the output, its size and SHA-256, as on disk. */
  async function written(out: string, changed: boolean): Promise<unknown> {
    const bytes = await readFile(join(out, 'unique-users', '2026-03-10.csv'));
    const file = { path: 'unique-users/2026-03-10.csv', bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    return { changed, path: join(out, file.path), file };
  }

  it('leaves a file holding the same bytes untouched (same inode and mtime) and says so; other bytes replace it', async () => {
    const out = await tempDir();
    const sink = new FileSink(out, { format: 'csv', shape: 'rows' });
    const path = join(out, 'unique-users', '2026-03-10.csv');
    expect(await sink.commit(unitData('a\n'))).toEqual(await written(out, true));
    const old = new Date('2026-01-01T00:00:00Z');
    await utimes(path, old, old);
    const before = await stat(path);
    expect(await sink.commit(unitData('a\n'))).toEqual(await written(out, false));
    const after = await stat(path);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    // Same length, other bytes; and a longer file with the same start.
    expect(await sink.commit(unitData('b\n'))).toEqual(await written(out, true));
    expect(await readFile(path, 'utf8')).toBe('h\nb\n');
    expect(await sink.commit(unitData('b\nc\n'))).toEqual(await written(out, true));
    expect(await sink.commit(unitData('b\n'))).toEqual(await written(out, true));
    expect(await readFile(path, 'utf8')).toBe('h\nb\n');
  });

  it('writes the hive layout: metric=<metric>/dt=<day>/<metric>_<day>.<ext>, set-aside records under _rejected/ alike', async () => {
    const out = await tempDir();
    const sink = new FileSink(out, { format: 'csv', shape: 'rows' }, 'hive');
    const rejected = [{ field: 'unique_users', value: -1, reason: 'must be >= 0', record: { store_code: 'S1' } }];
    const result = await sink.commit({ ...unitData('a\n'), unit: { metric, day: '2026-03-10', storeCode: 'S1' }, rejected });
    const path = 'metric=unique-users/dt=2026-03-10/unique-users_2026-03-10.store-S1.csv';
    expect(result.file?.path).toBe(path);
    expect(await readFile(join(out, path), 'utf8')).toBe('h\na\n');
    const setAside = await readFile(
      join(out, '_rejected/metric=unique-users/dt=2026-03-10/unique-users_2026-03-10.store-S1.ndjson'),
      'utf8',
    );
    expect(JSON.parse(setAside)).toMatchObject({ metric: 'unique-users', day: '2026-03-10', field: 'unique_users', value: -1 });
  });
});
