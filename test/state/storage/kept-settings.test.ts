import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { useTempDirs } from '../../helpers/tmp.js';
import { loadStateFile } from '../../helpers/state-file.js';
import type { ImportState } from '../../../src/state/import-state.js';
import type { StateLoadOptions } from '../../../src/state/storage/state-file.js';
import type { Layout } from '../../../src/output/layout.js';
import type { DayMode } from '../../../src/window/day-mode.js';

const tempDir = useTempDirs('kept-settings-');
const now = new Date('2026-11-26T12:00:00Z');
const metricNames = ['traffic'];

/** A setting the state keeps: stated by a first run and recorded, or the default, which earlier releases meant. */
interface KeptSetting {
  readonly name: string;
  readonly field: string;
  /** A value that is recorded, and the default that is not. */
  readonly values: readonly [stated: string, absent: string];
  readonly stating: (value: string) => Partial<StateLoadOptions>;
  readonly read: (state: ImportState) => string;
  /** How a run stating the other value is refused: at the default's state, at the stated one's. */
  readonly refusals: readonly [RegExp, RegExp];
}

const KEPT: readonly KeptSetting[] = [
  {
    name: 'layout',
    field: 'layout',
    values: ['hive', 'flat'],
    stating: (value) => ({ layout: value as Layout }),
    read: (state) => state.layout,
    refusals: [
      /--layout hive does not match the state .*flat\.json, whose files are laid out flat \(--layout flat\).*use --layout flat/,
      /--layout flat does not match the state .*hive\.json, whose files are laid out in hive partitions \(--layout hive\)/,
    ],
  },
  {
    name: 'day mode',
    field: 'days',
    values: ['local', 'utc'],
    stating: (value) => ({ mode: value as DayMode }),
    read: (state) => state.dayMode,
    refusals: [
      /--days local does not match the state .*utc\.json, which holds UTC days \(--days utc\).*use --days utc/,
      /--days utc does not match the state .*local\.json, which holds store-local days \(--days local\)/,
    ],
  },
];

describe('the state keeps its settings', () => {
  it.each(KEPT)(
    'a state of a stated $name says so; one of the default, like every earlier one, has no field; the other is refused (exit 2)',
    async ({ field, values: [stated, absent], stating, read, refusals: [atAbsent, atStated] }) => {
      const statedPath = join(await tempDir(), `${stated}.json`);
      await (await loadStateFile(statedPath, { now, metricNames, ...stating(stated) })).markComplete('traffic', '2026-11-22', ['S1']);
      expect(JSON.parse(await readFile(statedPath, 'utf8'))).toMatchObject({ [field]: stated });
      expect(read(await loadStateFile(statedPath, { now, metricNames }))).toBe(stated);

      const absentPath = join(await tempDir(), `${absent}.json`);
      await (await loadStateFile(absentPath, { now, metricNames, ...stating(absent) })).markComplete('traffic', '2026-11-22', ['S1']);
      expect(JSON.parse(await readFile(absentPath, 'utf8'))).not.toHaveProperty(field);
      expect(read(await loadStateFile(absentPath, { now, metricNames }))).toBe(absent);

      const before = await readFile(absentPath, 'utf8');
      const refusal = loadStateFile(absentPath, { now, metricNames, ...stating(stated) });
      await expect(refusal).rejects.toThrow(UsageError);
      await expect(refusal).rejects.toThrow(atAbsent);
      await expect(loadStateFile(statedPath, { now, metricNames, ...stating(absent) })).rejects.toThrow(atStated);
      expect(await readFile(absentPath, 'utf8')).toBe(before);
    },
  );

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
