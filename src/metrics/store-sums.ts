import { addSums, emptySums, exactTotalOf, type MeasureSums, type MetricTotal } from './measure.js';

/** Each store's sums: the store codes sorted, and the sums in their order. */
export interface StoreSums {
  readonly codes: readonly string[];
  readonly sums: readonly MeasureSums[];
}

/**
 * Results sorted by store, added up store by store (a store has one result a day; a unit spanning days may hold
 * more), with the total of them all.
 */
export function storeSumsOf(
  sorted: readonly { readonly storeCode: string; readonly sums: MeasureSums }[],
): StoreSums & { readonly total: MeasureSums } {
  const codes: string[] = [];
  const sums: MeasureSums[] = [];
  const total = emptySums();
  for (const { storeCode, sums: more } of sorted) {
    addSums(total, more);
    const last = sums.length - 1;
    if (codes[last] === storeCode) sums[last] = added(sums[last]!, more);
    else {
      codes.push(storeCode);
      sums.push(more);
    }
  }
  return { codes, sums, total };
}

/** The store sums of a day's units as one: a day fetched store by store is one unit a store. */
export function mergeStoreSums(units: readonly StoreSums[]): StoreSums {
  if (units.length === 1) return units[0]!;
  const byStore = new Map<string, MeasureSums>();
  for (const unit of units) {
    unit.codes.forEach((code, index) => {
      const kept = byStore.get(code);
      const more = unit.sums[index]!;
      byStore.set(code, kept === undefined ? more : added(kept, more));
    });
  }
  const codes = [...byStore.keys()].sort();
  return { codes, sums: codes.map((code) => byStore.get(code)!) };
}

/** Each store's figure, the metric's total of its sums, in the order of its code. */
export function storeTotals(stores: StoreSums, total: MetricTotal): Float64Array {
  const values = new Float64Array(stores.sums.length);
  for (let index = 0; index < values.length; index++) values[index] = exactTotalOf(stores.sums[index]!, total);
  return values;
}

/** New sums, so that the ones added stay what they were. */
function added(a: MeasureSums, b: MeasureSums): MeasureSums {
  const sum = emptySums();
  addSums(sum, a);
  addSums(sum, b);
  return sum;
}
