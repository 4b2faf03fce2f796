import { describe, expect, it } from 'vitest';
import type { UnitOutcome } from '../../src/import/pipeline.js';
import { planUnits } from '../../src/import/plan.js';
import { RunTally } from '../../src/import/tally.js';
import type { Unit } from '../../src/metrics/unit.js';
import { unitDataOf } from '../helpers/unit-data.js';

/** A written unit: `rows` rows and, when stored as a file, `bytes` bytes; `changed` false when the bytes were there. */
function written(unit: Unit, rows: number, file?: { bytes: number; changed: boolean }, rejected = 0): UnitOutcome {
  const data = unitDataOf(
    unit,
    rows,
    Array.from({ length: rejected }, () => ({ field: 'store_code', value: '', reason: 'is empty', record: {} })),
  );
  if (file === undefined) return { unit, ok: true, data, destination: 'stdout', changed: true };
  const path = `${unit.metric.name}/${unit.day}.csv`;
  return {
    unit,
    ok: true,
    data,
    destination: path,
    path,
    changed: file.changed,
    file: { path, bytes: file.bytes, sha256: 'c'.repeat(64) },
  };
}

describe('RunTally', () => {
  const [users, traffic, later] = planUnits(
    [
      { metric: 'unique-users', days: ['2026-11-20'] },
      { metric: 'traffic', days: ['2026-11-20', '2026-11-21'] },
    ],
    [],
  ) as [Unit, Unit, Unit];

  it('counts each committed unit once: rows and files per metric, unchanged and rejected, successes and failures', () => {
    const tally = new RunTally();
    tally.add(written(users, 12, { bytes: 400, changed: true }, 2));
    tally.add(written(traffic, 5, { bytes: 90, changed: false }));
    tally.add({ unit: later, ok: false, error: new Error('HTTP 503') });
    expect(tally).toMatchObject({ rows: 17, rejected: 2, unchanged: 1, succeeded: 2, failed: 1 });
    expect(tally.of('unique-users')).toEqual({ rowCount: 12, size: 400, fileCount: 1 });
    expect(tally.of('traffic')).toEqual({ rowCount: 5, size: 90, fileCount: 1 });
    expect(tally.rowsByMetric()).toEqual({ 'unique-users': 12, traffic: 5 });
  });

  it('a unit streamed to stdout counts its rows but no file, and a metric never written counts zero', () => {
    const tally = new RunTally();
    tally.add(written(traffic, 7));
    expect(tally.of('traffic')).toEqual({ rowCount: 7, size: 0, fileCount: 0 });
    expect(tally.of('unique-users')).toEqual({ rowCount: 0, size: 0, fileCount: 0 });
    expect(tally.unchanged).toBe(0);
  });
});
