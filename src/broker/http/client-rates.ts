/** One client's window: the requests counted in it and when it ends (epoch ms). */
interface ClientWindow {
  count: number;
  readonly endsAt: number;
}

/**
 * The per-client rate in memory, answered synchronously: a cached token is then written in the request's own
 * callback, without the promise and microtask hops of a store that may be remote. It counts exactly as
 * rate-limiter-flexible's memory store does (which the Redis store still uses as its insurance): a client's window
 * opens at its first request and lasts `windowMs`; every request in it counts, refused ones too; past `limit` the
 * request is refused until the window ends. A window is dropped when it ends (an unref'd timer, as that store does),
 * so the map holds only the clients of the last window.
 */
export class ClientRates {
  private readonly windows = new Map<string, ClientWindow>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of `client`: undefined when it is within the limit, else the ms until its window ends (>= 1). */
  take(client: string): number | undefined {
    const now = this.now();
    let window = this.windows.get(client);
    if (window === undefined || window.endsAt <= now) window = this.open(client, now);
    window.count += 1;
    return window.count <= this.limit ? undefined : Math.max(1, window.endsAt - now);
  }

  private open(client: string, now: number): ClientWindow {
    const window: ClientWindow = { count: 0, endsAt: now + this.windowMs };
    this.windows.set(client, window);
    setTimeout(() => {
      if (this.windows.get(client) === window) this.windows.delete(client);
    }, this.windowMs).unref();
    return window;
  }

  /** How many clients have a window open (tests: the map stays bounded). */
  get size(): number {
    return this.windows.size;
  }
}
