import { EnvHttpProxyAgent, type Dispatcher } from 'undici';

export interface DispatcherOptions {
  /** Sockets per origin: enough for every unit and page in flight. */
  readonly connections?: number;
  readonly timeoutMs: number;
}

/**
 * One keep-alive connection pool for the whole run. `EnvHttpProxyAgent` honours HTTP_PROXY, HTTPS_PROXY and
 * NO_PROXY, which is what a cron job behind a corporate proxy needs without any flag of ours.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  return new EnvHttpProxyAgent({
    connections: options.connections ?? 16,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connectTimeout: Math.min(options.timeoutMs, 30_000),
  });
}
