/**
 * A view of a value a hook makes later (a server started in `beforeAll`): read it (`view.url`) or call it (`view()`);
 * either reaches the value `current` returns then, its methods bound to it.
 */
export function liveView<T extends object>(current: () => T): T & (() => T) {
  return new Proxy(current, {
    get: (_target, key) => {
      const value: unknown = Reflect.get(current(), key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current()) : value;
    },
  }) as T & (() => T);
}
