/**
 * What a metric's day added up to. Pages and units add their results into sums, so the figures of a day fetched as
 * many units (one per store) are the figures of the whole day.
 */
export interface MeasureSums {
  /** The sum of the values (a mean's numerator). */
  value: number;
  /** How many values went into it (a mean's denominator). */
  weight: number;
  /** Raw values above zero: none at all is the vendor's classic failure. */
  nonZero: number;
}

export function emptySums(): MeasureSums {
  return { value: 0, weight: 0, nonZero: 0 };
}

export function addSums(into: MeasureSums, more: MeasureSums): void {
  into.value += more.value;
  into.weight += more.weight;
  into.nonZero += more.nonZero;
}

/** How a metric's day total is made from its sums: what it is called, and whether it is their sum or their mean. */
export interface MetricTotal {
  /** `sum of unique_users`: names the total in warnings, the state and status. */
  readonly measure: string;
  readonly kind: 'sum' | 'mean';
}

/** The total as it is: a store's figure, which the state keeps on a log scale of its own. */
export function exactTotalOf(sums: MeasureSums, total: MetricTotal): number {
  return total.kind === 'sum' ? sums.value : sums.weight === 0 ? 0 : sums.value / sums.weight;
}

/** The total as the state and warnings show it. */
export function totalOf(sums: MeasureSums, total: MetricTotal): number {
  // Six significant digits: enough to compare with a median, and a year of days stays short in the state.
  return Number(exactTotalOf(sums, total).toPrecision(6));
}
