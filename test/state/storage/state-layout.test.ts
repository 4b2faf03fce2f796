import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { useTempDirs } from '../../helpers/tmp.js';
import { loadStateFile } from '../../helpers/state-file.js';

const tempDir = useTempDirs('state-layout-');
const now = new Date('2026-11-26T12:00:00Z');
const metricNames = ['traffic'];

describe('the state keeps its output layout', () => {
  it('a hive state says so; a flat one, like every earlier one, has no field; the other layout is refused (exit 2)', async () => {
    const hivePath = join(await tempDir(), 'hive.json');
    await (await loadStateFile(hivePath, { now, metricNames, layout: 'hive' })).markComplete('traffic', '2026-11-22', ['S1']);
    expect(JSON.parse(await readFile(hivePath, 'utf8'))).toMatchObject({ layout: 'hive' });
    expect((await loadStateFile(hivePath, { now, metricNames })).layout).toBe('hive');

    const flatPath = join(await tempDir(), 'flat.json');
    await (await loadStateFile(flatPath, { now, metricNames, layout: 'flat' })).markComplete('traffic', '2026-11-22', ['S1']);
    expect(JSON.parse(await readFile(flatPath, 'utf8'))).not.toHaveProperty('layout');
    expect((await loadStateFile(flatPath, { now, metricNames })).layout).toBe('flat');

    const before = await readFile(flatPath, 'utf8');
    const refusal = loadStateFile(flatPath, { now, metricNames, layout: 'hive' });
    await expect(refusal).rejects.toThrow(UsageError);
    await expect(refusal).rejects.toThrow(
      /--layout hive does not match the state .*flat\.json, whose files are laid out flat \(--layout flat\).*use --layout flat/,
    );
    await expect(loadStateFile(hivePath, { now, metricNames, layout: 'flat' })).rejects.toThrow(
      /laid out in hive partitions \(--layout hive\)/,
    );
    expect(await readFile(flatPath, 'utf8')).toBe(before);
  });

  it('a run of the other layout that created the state since this one loaded it is refused at the first change', async () => {
    const path = join(await tempDir(), 'state.json');
    const flatRun = await loadStateFile(path, { now, metricNames, layout: 'flat' });
    await (await loadStateFile(path, { now, metricNames, layout: 'hive' })).markAsked([{ key: 'traffic', day: '2026-11-22' }]);
    await expect(flatRun.markComplete('traffic', '2026-11-22', ['S1'])).rejects.toThrow(/--layout flat does not match/);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      layout: 'hive',
      metrics: { traffic: { pending: { '2026-11-22': { reason: 'asked' } } } },
    });
  });

  it('keeps the day mode and the layout side by side', async () => {
    const path = join(await tempDir(), 'state.json');
    await (await loadStateFile(path, { now, metricNames, mode: 'local', layout: 'hive' })).markComplete('traffic', '2026-11-22', ['S1']);
    const state = await loadStateFile(path, { now, metricNames, mode: 'local', layout: 'hive' });
    expect([state.dayMode, state.layout]).toEqual(['local', 'hive']);
    await expect(loadStateFile(path, { now, metricNames, mode: 'utc', layout: 'hive' })).rejects.toThrow(/--days utc/);
  });

  it('keeps the format: a new state records the stated or default one; a state without one (earlier releases) records only a stated one', async () => {
    const path = join(await tempDir(), 'state.json');
    await (await loadStateFile(path, { now, metricNames, defaultFormat: 'csv' })).markComplete('traffic', '2026-11-22', ['S1']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ format: 'csv' });
    expect((await loadStateFile(path, { now, metricNames, defaultFormat: 'parquet' })).format).toBe('csv');
    await expect(loadStateFile(path, { now, metricNames, format: 'parquet' })).rejects.toThrow(
      /-f parquet does not match the state .*whose files are CSV \(-f csv\)/,
    );

    const old = join(await tempDir(), 'old.json');
    await (await loadStateFile(old, { now, metricNames })).markComplete('traffic', '2026-11-22', ['S1']);
    const unknown = await loadStateFile(old, { now, metricNames, defaultFormat: 'csv' });
    expect(unknown.format).toBeUndefined();
    await unknown.markComplete('traffic', '2026-11-23', ['S1']);
    expect(JSON.parse(await readFile(old, 'utf8'))).not.toHaveProperty('format');
    await (await loadStateFile(old, { now, metricNames, format: 'parquet' })).markComplete('traffic', '2026-11-24', ['S1']);
    expect(JSON.parse(await readFile(old, 'utf8'))).toMatchObject({ format: 'parquet' });
  });
});
