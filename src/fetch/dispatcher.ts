import { createRequire } from 'node:module';
import type { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici';
import { UsageError } from '../errors.js';

/**
 * undici's plain agent, from its own file: the package's index loads all of undici (fetch, WebSocket, caches, mocks:
 * 110 modules against about 25, some 60 ms of CPU at every start of a command that sends a request). It is the very
 * class the index exports (the index requires this file). The proxy-aware agent is taken from the index, which wires
 * the request API its tunnels use.
 */
const load = createRequire(import.meta.url);
function plainAgentClass(): typeof Agent {
  return load('undici/lib/dispatcher/agent.js') as typeof Agent;
}
function proxyAgentClass(): typeof EnvHttpProxyAgent {
  return (load('undici') as { EnvHttpProxyAgent: typeof EnvHttpProxyAgent }).EnvHttpProxyAgent;
}

export interface DispatcherOptions {
  /** Sockets per origin: enough for every unit and page in flight; null for no limit. */
  readonly connections?: number | null;
  readonly timeoutMs: number;
  /** Where the proxy variables are read: the command's environment, passed down, never read from the process here. */
  readonly env: NodeJS.ProcessEnv;
}

export interface ProxySettings {
  /** '' means none. */
  readonly httpProxy: string;
  readonly httpsProxy: string;
  readonly noProxy: string;
}

const PROXY_PROTOCOLS = new Set(['http:', 'https:', 'socks:', 'socks5:']);

/** The first of the variables that is set and not empty (lower case first, as undici and curl read them). */
function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

/** A proxy variable's value as a URL; like curl, `host:port` without a scheme means `http://host:port`. */
function proxyUrl(variable: { name: string; value: string }): string {
  const value = /^[a-z][a-z0-9+.-]*:\/\//i.test(variable.value) ? variable.value : `http://${variable.value}`;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  // The value is not repeated: it may hold the proxy's password.
  if (!url || !PROXY_PROTOCOLS.has(url.protocol) || url.hostname === '') {
    throw new UsageError(`${variable.name} is not a proxy URL; use e.g. http://proxy.example.com:3128 or proxy.example.com:3128`);
  }
  return value;
}

/** HTTP_PROXY, HTTPS_PROXY and NO_PROXY read once and checked, so a mistake is a usage error before any request. */
export function proxySettings(env: NodeJS.ProcessEnv): ProxySettings {
  const http = firstSet(env, ['http_proxy', 'HTTP_PROXY']);
  const https = firstSet(env, ['https_proxy', 'HTTPS_PROXY']);
  return {
    httpProxy: http ? proxyUrl(http) : '',
    // None of its own: https goes through the http proxy, if any.
    httpsProxy: https ? proxyUrl(https) : '',
    noProxy: firstSet(env, ['no_proxy', 'NO_PROXY'])?.value ?? '',
  };
}

/**
 * One keep-alive connection pool for the whole run. It honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY, which is what a
 * cron job behind a corporate proxy needs without any flag of ours.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const proxies = proxySettings(options.env);
  const pool = {
    connections: options.connections === undefined ? 16 : options.connections,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connectTimeout: Math.min(options.timeoutMs, 30_000),
  };
  // Without a proxy the proxy-aware agent sends everything through a plain agent with these options: use that alone.
  if (proxies.httpProxy === '' && proxies.httpsProxy === '') return new (plainAgentClass())(pool);
  return new (proxyAgentClass())({ ...proxies, ...pool });
}
