import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { inject, type InjectOptions, type Response as InjectedResponse } from 'light-my-request';
import { resolveBrokerConfig, type BrokerConfig } from '../../src/broker/config/config.js';
import {
  buildBrokerApp,
  startBroker,
  type BrokerApp,
  type BrokerDeps,
  type RunningBroker,
  type StartBrokerOptions,
} from '../../src/broker/http/server.js';
import { afterEach } from 'vitest';
import { waitUntil } from '../helpers/cli.js';

/** Collects a broker's JSON log lines; `all()` also lets a test check that no secret ever reached them. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of String(chunk).split('\n')) if (line !== '') this.lines.push(line);
    callback();
  }
  entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
  text(): string {
    return this.lines.join('\n');
  }
}

export interface BrokerFixtureOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  marginSeconds?: number;
  authTimeoutSeconds?: number;
  redisUrl?: string;
}

export const ANDROID_APP = 'com.acme.shop';
export const IOS_APP = 'com.acme.ShopApp';
export const WEB_APP = 'shop.acme.example';
/** A web application whose platform's secret env var is unset: 401, with CORS for its own origin. */
export const BROKEN_WEB_APP = 'broken.acme.example';

/** The usual three platforms; ios's secret env var is deliberately unset (→ 401). */
export function brokerConfig(options: BrokerFixtureOptions): BrokerConfig {
  return resolveBrokerConfig(
    {
      authUrl: options.authUrl,
      platforms: {
        android: { clientId: options.clientId, clientSecretEnv: 'TEST_ANDROID_SECRET' },
        ios: { clientId: options.clientId, clientSecretEnv: 'TEST_IOS_SECRET_UNSET' },
        web: { clientId: options.clientId, clientSecretEnv: 'TEST_WEB_SECRET' },
        'web-broken': { clientId: options.clientId, clientSecretEnv: 'TEST_UNSET', browser: true },
      },
      applications: { [ANDROID_APP]: 'android', [IOS_APP]: 'ios', [WEB_APP]: 'web', [BROKEN_WEB_APP]: 'web-broken' },
      cache: { marginSeconds: options.marginSeconds ?? 60, ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}) },
      ...(options.authTimeoutSeconds !== undefined ? { authTimeoutSeconds: options.authTimeoutSeconds } : {}),
    },
    { env: { TEST_ANDROID_SECRET: options.clientSecret, TEST_WEB_SECRET: options.clientSecret } },
  );
}

export async function startTestBroker(
  fixture: BrokerFixtureOptions,
  options: Omit<StartBrokerOptions, 'logStream'> = {},
): Promise<{ broker: RunningBroker; logs: LogCapture }> {
  const logs = new LogCapture();
  const broker = await startBroker(brokerConfig(fixture), { port: 0, ...options, logStream: logs });
  if (fixture.redisUrl !== undefined || options.redisUrl !== undefined) await untilRedisKnown(logs);
  return { broker, logs };
}

/**
 * Start-up does not wait for Redis; a test that wants Redis's first outcome (connected and taking commands, or down)
 * before its first request waits for its log line.
 */
export async function untilRedisKnown(logs: LogCapture, timeoutMs = 5000): Promise<void> {
  await waitUntil(() => /"redis":"(up|down)"/.test(logs.text()), "the broker's first Redis state in its logs", timeoutMs);
}

/**
 * A broker built but not listening: `fetch` sends each request through the whole app (fast path included) with
 * `inject`, no socket. For every test whose point is not the socket itself (timeouts, drains, raw headers).
 */
export interface TestBroker {
  /** A base URL for building request URLs; nothing listens there. */
  readonly url: string;
  readonly built: BrokerApp;
  readonly logs: LogCapture;
  /** One request through the broker's whole listener (fast path included), as fastify's own `inject` sends it. */
  inject(options: InjectOptions | string): Promise<InjectedResponse>;
  /** Like the global fetch, through `inject`; the request comes from 127.0.0.1. */
  fetch(url: string, init?: FetchInit): Promise<Response>;
  close(): Promise<void>;
}

type FetchInit = { method?: string; headers?: Record<string, string>; body?: string };

const injected = new Map<string, TestBroker>();
let serial = 0;

/** The broker `config` built with `deps` and driven through `inject`; its log lines are captured. */
export function injectedBroker(config: BrokerConfig, deps: Omit<BrokerDeps, 'logStream'> = {}): TestBroker {
  const logs = new LogCapture();
  const built = buildBrokerApp(config, { ...deps, logStream: logs });
  serial += 1;
  const url = `http://broker-${serial}.test`;
  const broker: TestBroker = {
    url,
    built,
    logs,
    inject: async (options) => {
      await built.app.ready();
      return inject(built.listener, options);
    },
    fetch: async (target, init = {}) => {
      const { pathname, search } = new URL(target, url);
      const answer = await broker.inject({
        method: (init.method ?? 'GET') as 'GET',
        url: `${pathname}${search}`,
        ...(init.headers !== undefined ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { payload: init.body } : {}),
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) headers.append(name, String(one));
      }
      const empty = answer.statusCode === 204 || answer.statusCode === 304 || init.method === 'HEAD';
      return new Response(empty ? null : answer.rawPayload, { status: answer.statusCode, headers });
    },
    close: async () => {
      injected.delete(url);
      await built.close();
    },
  };
  injected.set(url, broker);
  return broker;
}

/** fetch for any broker of a test: an injected broker's URL goes through its `inject`, any other over the network. */
export function brokerFetch(target: string | URL, init?: FetchInit): Promise<Response> {
  const broker = injected.get(new URL(target).origin);
  return broker === undefined ? fetch(target, init) : broker.fetch(String(target), init);
}

/** The usual test broker (see `brokerConfig`) through `inject`; waits for Redis's first state when one is configured. */
export async function injectTestBroker(fixture: BrokerFixtureOptions, deps: Omit<BrokerDeps, 'logStream'> = {}): Promise<TestBroker> {
  const broker = injectedBroker(brokerConfig(fixture), deps);
  if (fixture.redisUrl !== undefined || deps.redisUrl !== undefined) await untilRedisKnown(broker.logs);
  return broker;
}

/**
 * A clock that stands still until the test moves it: token lifetimes and back-offs pass in an instant, while
 * timeouts, polls and Redis expiries run in real time.
 */
export class TestClock {
  private at = Date.now();
  readonly now = (): number => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
  /** Moves the clock to `epochMs` (forward only: a broker's clock never runs back). */
  setTo(epochMs: number): void {
    this.at = Math.max(this.at, epochMs);
  }
}

export function tokenUrl(broker: { readonly url: string }, application?: string): string {
  const url = new URL('/api/gatekeeper-token', broker.url);
  if (application !== undefined) url.searchParams.set('application_package', application);
  return url.toString();
}

/** Checks an HS256 JWT against the key that signed it (the sandbox's), so tests know it is a real, unaltered token. */
export function verifyHs256(token: string, key: string): Record<string, unknown> {
  const [header, claims, signature] = token.split('.') as [string, string, string];
  const expected = createHmac('sha256', key).update(`${header}.${claims}`).digest('base64url');
  if (expected !== signature) throw new Error('signature mismatch');
  return JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The closers a test file's tests register (servers, brokers), run last first after each test. */
export function useCleanups(): (() => Promise<void>)[] {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (stops.length > 0) await stops.pop()?.();
  });
  return stops;
}
