/** `traffic`, or `traffic[store=A,B]` when a run is limited to stores, so partial runs never mark a day done. */
export function stateKey(metric: string, storeCodes: readonly string[]): string {
  return storeCodes.length === 0 ? metric : `${metric}[store=${[...storeCodes].sort().join(',')}]`;
}

/** The metric of a state key (`traffic[store=A]` -> `traffic`). */
export function metricOfKey(key: string): string {
  const bracket = key.indexOf('[');
  return bracket < 0 ? key : key.slice(0, bracket);
}

/** A key of one of the metrics, whole or limited to stores. */
export function isKnownKey(key: string, metricNames: readonly string[]): boolean {
  const match = /^([a-z-]+)(?:\[store=.+\])?$/s.exec(key);
  return match !== null && metricNames.includes(match[1]!);
}
