/**
 * Remembers `compute(key)` for keys that recur (store codes, dates, zone names), so each distinct one is computed
 * once. Bounded: when `limit` keys are held the memory starts over, so a feed of all-distinct values cannot grow it.
 */
export function boundedMemo<V>(compute: (key: string) => V, limit: number): (key: string) => V {
  const cache = new Map<string, V>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = compute(key);
      if (cache.size >= limit) cache.clear();
      cache.set(key, value);
    }
    return value;
  };
}
