import type { Unit, UnitData } from '../../src/metrics/unit.js';
import { emptySums } from '../../src/metrics/measure.js';
import type { RejectedRecord } from '../../src/metrics/page.js';

/** A fetched unit's data with `rows` rows in one page and no bytes of its own, for tests of what counts it. */
export function unitDataOf(unit: Unit, rows: number, rejected: readonly RejectedRecord[] = []): UnitData {
  return {
    unit,
    count: rows,
    pages: 1,
    rowCount: rows,
    header: undefined,
    pieces: [],
    rejected: [...rejected],
    warnings: [],
    storeCodes: [],
    dropped: 0,
    attempts: 1,
    requests: 1,
    throttled: 0,
    measure: emptySums(),
    storeSums: [],
  };
}
