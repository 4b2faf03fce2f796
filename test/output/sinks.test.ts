import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import { unitFileName } from '../../src/output/sinks.js';

const metric = METRICS['unique-users'];

describe('unitFileName', () => {
  it('names a store unit by its URL-encoded code', () => {
    expect(unitFileName({ unit: { metric, day: '2026-03-10' } }, 'csv')).toBe('2026-03-10.csv');
    expect(unitFileName({ unit: { metric, day: '2026-03-10', storeCode: 'A/B 1' } }, 'csv')).toBe('2026-03-10.store-A%2FB%201.csv');
  });

  it.each([
    ['240 ASCII characters', 'S'.repeat(240)],
    ['21 CJK characters, 189 once URL-encoded', '店'.repeat(21)],
  ])('names a code too long for a file name (%s) by its SHA-256, within 255 bytes with the temp suffix', (_what, code) => {
    const name = unitFileName({ unit: { metric, day: '2026-03-10', storeCode: code } }, 'ndjson');
    expect(name).toBe(`2026-03-10.store-sha256-${createHash('sha256').update(code).digest('hex')}.ndjson`);
    // atomic-file writes `.<name>.<pid>.<8 hex>.tmp` next to it first.
    expect(Buffer.byteLength(`.${name}.4194304.deadbeef.tmp`)).toBeLessThanOrEqual(255);
  });

  it('keeps the readable name up to 180 encoded characters', () => {
    const code = 'S'.repeat(180);
    expect(unitFileName({ unit: { metric, day: '2026-03-10', storeCode: code } }, 'ndjson')).toBe(`2026-03-10.store-${code}.ndjson`);
  });
});
