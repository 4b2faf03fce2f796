import { describe, expect, it } from 'vitest';
import { entriesByZone, hasRepeatedZone, screenTimeSeconds, zoneOf } from '../../src/metrics/schema.js';

/** The plain way: a stable sort of the entries by zone name in code-unit order. */
function plainlySorted(values: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return [...values].sort((a, b) => (zoneOf(a) < zoneOf(b) ? -1 : zoneOf(a) > zoneOf(b) ? 1 : 0));
}

/** Deterministic pseudo-random zone names, some sharing a prefix, some with spaces, quotes and non-ASCII. */
function zones(count: number, seed: number): Record<string, unknown>[] {
  const labels = ['[1] ENTRANCE', '[1] ENTRANCE HALL', 'Café "Central"', 'Électroménager', '食品売り場', 'a', 'A', 'Z 9', 'Z10'];
  return Array.from({ length: count }, (_, index) => {
    const label = `${labels[(index * 7 + seed) % labels.length]} ${(index * 7919 + seed) % 97}`;
    return index % 3 === 0 ? { zone_name: label, unique_users: index } : { zone: label, unique_users: index };
  });
}

describe('entriesByZone', () => {
  it('returns a list already in zone order as it is', () => {
    const values = plainlySorted(zones(12, 1));
    expect(entriesByZone(values)).toBe(values);
  });

  it.each([2, 5, 20, 64, 65, 300])('orders %i entries as a stable sort by zone name does', (count) => {
    for (const seed of [0, 3, 11]) {
      const values = zones(count, seed);
      const expected = plainlySorted(values);
      expect(entriesByZone(values)).toEqual(expected);
      // Asked again (the check, then the encoder), the answer is the same, and the input is untouched.
      expect(entriesByZone(values)).toEqual(expected);
      expect(values).toEqual(zones(count, seed));
    }
  });

  it('keeps entries of equal zone names in their order', () => {
    const values = [
      { zone: 'B', n: 1 },
      { zone: 'A', n: 2 },
      { zone_name: 'B', n: 3 },
      { zone: 'A', n: 4 },
    ];
    expect(entriesByZone(values).map((entry) => entry.n)).toEqual([2, 4, 1, 3]);
  });
});

describe('hasRepeatedZone', () => {
  it('finds a zone name given twice, through zone or zone_name, in any position', () => {
    expect(hasRepeatedZone([{ zone: 'B' }, { zone: 'A' }, { zone: 'C' }])).toBe(false);
    expect(hasRepeatedZone([{ zone: 'B' }, { zone: 'A' }, { zone_name: 'B' }])).toBe(true);
    const distinct = Array.from({ length: 200 }, (_, index) => ({ zone: `zone ${String(199 - index).padStart(3, '0')}` }));
    expect(hasRepeatedZone(distinct)).toBe(false);
    expect(hasRepeatedZone([...distinct, { zone: 'zone 123' }])).toBe(true);
  });
});

describe('screenTimeSeconds', () => {
  it('reads HH:MM:SS with two to four digits of hours', () => {
    expect(screenTimeSeconds('00:00:00')).toBe(0);
    expect(screenTimeSeconds('01:02:03')).toBe(3723);
    expect(screenTimeSeconds('23:59:59')).toBe(86_399);
    expect(screenTimeSeconds('123:00:01')).toBe(442_801);
    expect(screenTimeSeconds('9999:59:59')).toBe(9999 * 3600 + 3599);
    expect(screenTimeSeconds('0012:30:00')).toBe(12 * 3600 + 1800);
  });
});
