import { describe, expect, it } from 'vitest';
import { dayOfUnitPath, metricFolder, rejectedPath, tempFileFolders, unitPath } from '../../src/output/layout.js';

const traffic = { name: 'traffic' };

describe('the output layouts', () => {
  it.each([
    ['flat', {}, 'csv', 'traffic/2026-11-20.csv'],
    ['flat', { storeCode: 'S 1/2' }, 'parquet', 'traffic/2026-11-20.store-S%201%2F2.parquet'],
    ['hive', {}, 'csv', 'metric=traffic/dt=2026-11-20/traffic_2026-11-20.csv'],
    ['hive', {}, 'ndjson', 'metric=traffic/dt=2026-11-20/traffic_2026-11-20.ndjson'],
    ['hive', { storeCode: 'S 1/2' }, 'parquet', 'metric=traffic/dt=2026-11-20/traffic_2026-11-20.store-S%201%2F2.parquet'],
  ] as const)('%s %j .%s: %s', (layout, store, extension, path) => {
    expect(unitPath({ metric: traffic, day: '2026-11-20', ...store }, extension, layout)).toBe(path);
  });

  it('puts set-aside records in the same layout under _rejected/, as NDJSON', () => {
    expect(rejectedPath({ metric: traffic, day: '2026-11-20' }, 'flat')).toBe('_rejected/traffic/2026-11-20.ndjson');
    expect(rejectedPath({ metric: traffic, day: '2026-11-20', storeCode: 'S1' }, 'hive')).toBe(
      '_rejected/metric=traffic/dt=2026-11-20/traffic_2026-11-20.store-S1.ndjson',
    );
  });

  it('names the metric folders, and where temp files of a killed run can be', () => {
    expect([metricFolder('traffic', 'flat'), metricFolder('traffic', 'hive')]).toEqual(['traffic', 'metric=traffic']);
    const units = ['2026-11-20', '2026-11-21'].flatMap((day) => [
      { metric: traffic, day },
      { metric: traffic, day, storeCode: 'S1' },
    ]);
    // Flat: every metric's folder, whatever the run imports.
    expect(tempFileFolders(['traffic', 'unique-users'], units, 'flat')).toEqual([
      'traffic',
      '_rejected/traffic',
      'unique-users',
      '_rejected/unique-users',
    ]);
    // Hive: the day folders of the run's units.
    expect(tempFileFolders(['traffic', 'unique-users'], units, 'hive')).toEqual([
      'metric=traffic/dt=2026-11-20',
      '_rejected/metric=traffic/dt=2026-11-20',
      'metric=traffic/dt=2026-11-21',
      '_rejected/metric=traffic/dt=2026-11-21',
    ]);
  });
});

describe('dayOfUnitPath', () => {
  it('reads back the day of every path unitPath names, and nothing of other files', () => {
    for (const layout of ['flat', 'hive'] as const) {
      for (const storeCode of [undefined, 'S001', 'a/b c']) {
        const unit = { metric: { name: 'traffic' }, day: '2026-11-20', ...(storeCode === undefined ? {} : { storeCode }) };
        expect(dayOfUnitPath(unitPath(unit, 'csv', layout), 'traffic', 'csv', layout)).toBe('2026-11-20');
        expect(dayOfUnitPath(unitPath(unit, 'csv', layout), 'traffic', 'parquet', layout)).toBeUndefined();
        expect(dayOfUnitPath(unitPath(unit, 'csv', layout), 'unique-users', 'csv', layout)).toBeUndefined();
      }
    }
    expect(dayOfUnitPath('traffic/2026-11-20.csv.tmp-123', 'traffic', 'csv', 'flat')).toBeUndefined();
    expect(dayOfUnitPath('metric=traffic/dt=2026-11-21/traffic_2026-11-20.csv', 'traffic', 'csv', 'hive')).toBeUndefined();
    expect(dayOfUnitPath('traffic/2026-11-20.csv', 'traffic', 'csv', 'hive')).toBeUndefined();
  });
});
