import type { BrokerLogLevel } from '../broker/http/server.js';
import { integer, oneOf, text, valueOption, type OptionValues } from './options.js';

const LOG_LEVELS: readonly BrokerLogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export const BROKER_OPTIONS = {
  config: valueOption({
    flags: '--config <file>',
    env: 'AREA_METRICS_BROKER_CONFIG',
    parse: text,
    description: 'broker config JSON (required)',
  }),
  host: valueOption({
    flags: '--host <host>',
    env: 'AREA_METRICS_BROKER_HOST',
    parse: text,
    default: '127.0.0.1',
    description: 'address to listen on',
  }),
  port: valueOption({
    flags: '--port <port>',
    env: 'AREA_METRICS_BROKER_PORT',
    parse: integer(0, 65535, 'a port number'),
    default: 8080,
    description: 'port to listen on, 0 = any free port',
  }),
  redisUrl: valueOption({
    flags: '--redis-url <url>',
    env: 'AREA_METRICS_REDIS_URL',
    parse: text,
    description: "Redis as the shared cache of several instances; overrides where the config's Redis is",
  }),
  logLevel: valueOption({
    flags: '--log-level <level>',
    parse: oneOf(LOG_LEVELS),
    choices: LOG_LEVELS,
    default: 'info',
    description: 'lowest level of the JSON log lines on stderr',
  }),
};

export type BrokerOptions = OptionValues<typeof BROKER_OPTIONS>;

export const BROKER_HELP = `
Examples:
  ANDROID_SECRET=... IOS_SECRET=... area-metrics broker --config broker.json
  area-metrics broker --config broker.json --host 0.0.0.0 --port 8080 --redis-url redis://redis:6379/0
  curl 'http://127.0.0.1:8080/api/gatekeeper-token?application_package=com.acme.shop'

Config (secrets come from env vars or files, not from the config text):
  {"authUrl": "https://auth.example.com",
   "platforms": {"android": {"clientId": "...", "clientSecretEnv": "ANDROID_SECRET"},
                 "web": {"clientId": "...", "clientSecretFile": "/run/secrets/web"}},
   "applications": {"com.acme.shop": "android", "shop.acme.example": "web"},
   "cache": {"marginSeconds": 60}}
App Check (only genuine app builds get tokens): "attestation": {"mode": "report" or "enforce",
  "provider": "firebase-app-check", "projectNumber": "..."}, each application {"platform": "android", "appId": "1:..."}.

Endpoints: GET /api/gatekeeper-token, GET /healthz, GET /readyz, GET /metrics (or on server.metricsPort).
SIGTERM/SIGINT: /readyz answers 503 for server.shutdownDelaySeconds while tokens are still served, then stop
accepting connections, finish in-flight requests (at most server.shutdownTimeoutSeconds), exit 0; a second
signal exits at once. SIGHUP: read the config again (kept as it was if the new one is not valid).
Exit codes: 0 stopped by a signal; 2 invalid config or options (the message names the field), or the port
cannot be bound.
Logs: one JSON object per line on stderr (request id, application, cache hit/miss, auth latency; no secrets).`;
