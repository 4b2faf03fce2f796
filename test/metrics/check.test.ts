import { describe, expect, it } from 'vitest';
import { checkResult, describeValue, plainlyValid, type RequestScope } from '../../src/metrics/check.js';
import { METRIC_NAMES, METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import { Dataset } from '../../src/sandbox/data.js';

const DAY_MS = 86_400_000;
const base = { store_code: 'S001', date: '2026-11-20T00:00:00+02:00', granularity: 'daily' };
const good = {
  'unique-users': { ...base, values: [{ zone: 'A', unique_users: 3 }] },
  'avg-screen-time': { ...base, values: [{ zone: 'A', avg_screen_time: '00:05:09' }] },
  traffic: { ...base, values: [{ zone: 'A', traffic_pct: '1.00000' }] },
} as const;
/** Wide enough for every date of the corpus: these tests are about the data contract, not the window. */
const anyTime: RequestScope = { fromMs: -1e15, toMs: 1e15, label: 'any' };

/** Every way we know a record can be wrong, and a few ways it can be unusual but right. */
function mutations(metric: MetricName, record: Record<string, unknown>): unknown[] {
  const { valueKey } = METRICS[metric];
  const values = record.values as Record<string, unknown>[];
  const first = values[0]!;
  const withEntry = (entry: unknown, at = 0) => ({ ...record, values: values.map((one, index) => (index === at ? entry : one)) });
  const badValues: unknown[] = [
    null,
    true,
    '',
    '3',
    -1,
    1.5,
    2 ** 53,
    1e21,
    -0,
    '00:60:00',
    '00:00:60',
    '24:00:00',
    '9999:59:59',
    '10000:00:00',
    '99999999999999999999:00:00',
    '1:00:00',
    '0.5',
    '0.50000',
    '1.00001',
    '01.0',
    '0',
    '1',
    '1.',
    '.5',
    '-0.1',
    'abc',
    [],
    {},
    0,
    7,
  ];
  const badTexts: unknown[] = [
    undefined,
    null,
    '',
    7,
    [],
    {},
    '\ud800',
    'a\udc00b',
    '\ud83d\ude00 ok',
    ' ',
    'Ünï',
    'S\u0000',
    'a\nb',
    '\u001f',
    '\t',
    'S\u007f',
  ];
  const badDates: unknown[] = [
    '2026-11-20T00:00:00',
    '2026-11-20',
    '2026-02-30T00:00:00Z',
    '2024-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-11-20T24:00:00Z',
    '2026-11-20T23:59:60Z',
    '2026-11-20T00:00:00+99:00',
    '2026-11-20T00:00:00+23:59',
    '2026-11-20T00:00:00+14:00',
    '2026-11-20T00:00:00+14:01',
    '2026-11-20T00:00:00-12:00',
    '2026-11-20T00:00:00-12:30',
    '2026-11-20T00:00:00+05:60',
    '2026-11-20T00:00:00.123Z',
    '2026-11-20T00:00:00.Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '0099-01-01T00:00:00Z',
    20261120,
    null,
  ];
  return [
    null,
    'text',
    7,
    [],
    [record],
    ...badTexts.map((store_code) => ({ ...record, store_code })),
    ...badDates.map((date) => ({ ...record, date })),
    ...['hourly', 'Daily', null, undefined].map((granularity) => ({ ...record, granularity })),
    ...[null, 'A', {}, [], [null], [[]], [7]].map((list) => ({ ...record, values: list })),
    ...badValues.map((value) => withEntry({ ...first, [valueKey]: value })),
    ...badTexts.map((zone) => withEntry({ ...first, zone })),
    ...badTexts.map((zone) => withEntry({ [valueKey]: first[valueKey], zone_name: zone })),
    withEntry({ [valueKey]: first[valueKey] }),
    withEntry({ ...first, zone_name: 'other' }),
    withEntry({ ...first, zone_name: null }),
    withEntry({ ...first, extra: [[[1]]] }),
    { ...record, extra: true },
    // Zones repeated, reordered, or the same name under the other key.
    { ...record, values: [...values, first] },
    { ...record, values: [...values].reverse() },
    { ...record, values: [...values, { [valueKey]: first[valueKey], zone_name: first.zone }] },
    { ...record, values: [] },
  ];
}

function corpus(metric: MetricName): unknown[] {
  const dataset = new Dataset({ stores: 40, zones: 8, days: 3, seed: 7 });
  const now = new Date();
  const refs = dataset.query(metric, { fromMs: now.getTime() - 3 * DAY_MS, toMs: now.getTime() }, undefined, now);
  const valid = dataset.slice(metric, refs, 0, refs.count) as unknown as Record<string, unknown>[];
  expect(valid.length).toBeGreaterThan(50);
  return [...valid, ...valid.slice(0, 3).flatMap((record) => mutations(metric, record)), ...mutations(metric, good[metric])];
}

describe('the fast path and the zod schema agree', () => {
  it.each(METRIC_NAMES)('%s: a record the fast path vouches for is one the schema accepts, and every sandbox record takes it', (name) => {
    const metric = METRICS[name];
    let vouched = 0;
    let accepted = 0;
    for (const record of corpus(name)) {
      const fast = plainlyValid(metric, record) !== undefined;
      const zod = metric.schema.safeParse(record).success;
      // The fast path may only say "plainly valid"; it must never admit what the contract rejects.
      if (fast) expect({ record, zod }).toEqual({ record, zod: true });
      // And it is no mere subset: it admits every record the schema admits here (else the hot path would be slow).
      if (zod) expect({ record, fast }).toEqual({ record, fast: true });
      vouched += fast ? 1 : 0;
      accepted += zod ? 1 : 0;
      expect(checkResult(metric, record, anyTime).ok).toBe(zod);
    }
    expect(vouched).toBe(accepted);
    expect(accepted).toBeGreaterThan(50);
  });
});

describe('checkResult', () => {
  it.each(Object.entries(good))('accepts a valid %s result', (name, record) => {
    expect(checkResult(METRICS[name as MetricName], record, anyTime).ok).toBe(true);
  });

  it('accepts zone_name in place of zone, and Z as an offset', () => {
    const record = { ...base, date: '2026-11-20T00:00:00Z', values: [{ zone_name: 'B', unique_users: 0 }] };
    expect(checkResult(METRICS['unique-users'], record, anyTime).ok).toBe(true);
  });

  /** The good result with `values` instead of its own. */
  const withValues = (...values: Record<string, unknown>[]) => ({ ...base, values });

  it.each([
    ['unique-users', { ...base, store_code: '' }, 'store_code', ''],
    ['unique-users', { ...base, store_code: 7 }, 'store_code', 7],
    ['unique-users', { ...base, store_code: 'S\ud800' }, 'store_code', 'S\ud800'],
    ['unique-users', { ...base, store_code: 'S\u0000' }, 'store_code', 'S\u0000'],
    ['unique-users', { ...base, store_code: 'S\n2' }, 'store_code', 'S\n2'],
    ['unique-users', { ...base, date: '2026-11-20T00:00:00' }, 'date', '2026-11-20T00:00:00'],
    ['unique-users', { ...base, date: '2026-11-20' }, 'date', '2026-11-20'],
    ['unique-users', { ...base, date: '2026-02-30T00:00:00+02:00' }, 'date', '2026-02-30T00:00:00+02:00'],
    ['unique-users', { ...base, date: '2026-11-20T24:00:00Z' }, 'date', '2026-11-20T24:00:00Z'],
    ['unique-users', { ...base, date: '2026-11-20T00:00:00+99:00' }, 'date', '2026-11-20T00:00:00+99:00'],
    ['unique-users', { ...base, date: '2026-11-20T00:00:00+23:59' }, 'date', '2026-11-20T00:00:00+23:59'],
    ['unique-users', { ...base, granularity: 'hourly' }, 'granularity', 'hourly'],
    ['unique-users', { ...base, values: 'A' }, 'values', 'A'],
    ['unique-users', withValues({ zone: 'A', unique_users: -1 }), 'values[0].unique_users', -1],
    ['unique-users', withValues({ zone: 'A', unique_users: 1.5 }), 'values[0].unique_users', 1.5],
    ['unique-users', withValues({ zone: 'A', unique_users: '3' }), 'values[0].unique_users', '3'],
    ['unique-users', withValues({ unique_users: 3 }), 'values[0].zone', undefined],
    ['unique-users', withValues({ zone: '', unique_users: 3 }), 'values[0].zone', ''],
    ['unique-users', withValues({ zone: '\ud800', unique_users: 3 }), 'values[0].zone', '\ud800'],
    ['unique-users', withValues({ zone: 'A\u001f', unique_users: 3 }), 'values[0].zone', 'A\u001f'],
    ['unique-users', withValues({ zone_name: '\t', unique_users: 3 }), 'values[0].zone_name', '\t'],
    ['unique-users', withValues({ zone: 'A', unique_users: 1 }, { zone: 'A', unique_users: 9 }), 'values[1].zone', 'A'],
    ['unique-users', withValues({ zone: 'A', unique_users: 1 }, { zone_name: 'A', unique_users: 9 }), 'values[1].zone_name', 'A'],
    ['avg-screen-time', withValues({ zone: 'A', avg_screen_time: '1:75:00' }), 'values[0].avg_screen_time', '1:75:00'],
    ['avg-screen-time', withValues({ zone: 'A', avg_screen_time: '00:60:00' }), 'values[0].avg_screen_time', '00:60:00'],
    ['avg-screen-time', withValues({ zone: 'A', avg_screen_time: '00:00:60' }), 'values[0].avg_screen_time', '00:00:60'],
    [
      'avg-screen-time',
      withValues({ zone: 'A', avg_screen_time: '99999999999999999999:00:00' }),
      'values[0].avg_screen_time',
      '99999999999999999999:00:00',
    ],
    ['avg-screen-time', withValues({ zone: 'A', avg_screen_time: 300 }), 'values[0].avg_screen_time', 300],
    ['traffic', withValues({ zone: 'A', traffic_pct: 'abc' }), 'values[0].traffic_pct', 'abc'],
    ['traffic', withValues({ zone: 'A', traffic_pct: '1.00001' }), 'values[0].traffic_pct', '1.00001'],
    ['traffic', withValues({ zone: 'A', traffic_pct: '-0.10000' }), 'values[0].traffic_pct', '-0.10000'],
    ['traffic', withValues({ zone: 'A', traffic_pct: 0.5 }), 'values[0].traffic_pct', 0.5],
  ])('%s: %j breaks %s', (name, record, field, value) => {
    const check = checkResult(METRICS[name as MetricName], record, anyTime);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.violation.field).toBe(field);
    expect(check.violation.value).toEqual(value);
    expect(check.violation.reason.length).toBeGreaterThan(3);
  });

  it('checks the instant against the requested window, both ends included, whatever the offset', () => {
    const scope: RequestScope = {
      fromMs: Date.parse('2026-11-20T00:00:00Z'),
      toMs: Date.parse('2026-11-20T23:59:59Z'),
      label: '2026-11-20',
    };
    const at = (date: string) => checkResult(METRICS['unique-users'], { ...good['unique-users'], date }, scope);
    expect(at('2026-11-20T00:00:00Z').ok).toBe(true);
    expect(at('2026-11-21T01:59:59+02:00').ok).toBe(true);
    expect(at('2026-11-20T00:00:00+02:00').ok).toBe(false);
    expect(at('2026-11-19T19:00:00-05:00').ok).toBe(true);
    expect(at('2026-11-25T00:00:00Z')).toMatchObject({
      ok: false,
      violation: { field: 'date', reason: 'lies outside the requested window 2026-11-20' },
    });
  });

  it('checks the store when one was asked for', () => {
    const scope: RequestScope = { ...anyTime, storeCode: 'S002' };
    expect(checkResult(METRICS['unique-users'], good['unique-users'], scope)).toMatchObject({
      ok: false,
      violation: { field: 'store_code', value: 'S001' },
    });
    expect(checkResult(METRICS['unique-users'], { ...good['unique-users'], store_code: 'S002' }, scope).ok).toBe(true);
  });

  it('in local mode admits the day asked for and its neighbours, and names the date of any other day', () => {
    const scope: RequestScope = { ...anyTime, localDay: '2026-11-22' };
    const at = (date: string) => checkResult(METRICS['unique-users'], { ...good['unique-users'], date }, scope);
    for (const date of ['2026-11-21T00:00:00+14:00', '2026-11-22T00:00:00-12:00', '2026-11-23T00:00:00+13:00'])
      expect(at(date).ok, date).toBe(true);
    expect(at('2026-11-24T00:00:00+13:00')).toEqual({
      ok: false,
      violation: {
        field: 'date',
        value: '2026-11-24T00:00:00+13:00',
        reason: 'is a local day neither 2026-11-22 nor a day next to it, which its window cannot hold',
      },
    });
    expect(at('2026-11-20T00:00:00-12:00')).toMatchObject({ ok: false, violation: { field: 'date', value: '2026-11-20T00:00:00-12:00' } });
  });

  it('gives two spellings of one instant the same instant', () => {
    const a = checkResult(METRICS['unique-users'], { ...good['unique-users'], date: '2026-11-20T00:00:00+00:00' }, anyTime);
    const b = checkResult(METRICS['unique-users'], { ...good['unique-users'], date: '2026-11-20T00:00:00Z' }, anyTime);
    expect(a.ok && b.ok && a.instant === b.instant).toBe(true);
  });
});

describe('describeValue', () => {
  it('cuts long values and says so for values too deep to show', () => {
    expect(describeValue('x'.repeat(200))).toHaveLength(80);
    let deep: unknown = 0;
    for (let depth = 0; depth < 20_000; depth++) deep = [deep];
    expect(describeValue(deep)).toBe('(a value nested too deeply to show)');
  });
});
