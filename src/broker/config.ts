import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseHttpUrl } from '../auth/client-credentials.js';
import { secretFromFileText } from '../auth/secret-file.js';
import { errnoCode, UsageError, messageOf } from '../errors.js';

/** An application package is an Android package, an iOS bundle id or a web domain: at most 255 characters. */
export const MAX_APPLICATION_PACKAGE_LENGTH = 255;
// C0 and C1 control characters and DEL: never part of a package name, and dangerous in logs and headers.
const CONTROL_CHARACTERS = /\p{Cc}/u;

/** Why a value cannot be an application package, or undefined when it can. */
export function applicationPackageProblem(value: string): string | undefined {
  if (value.length === 0) return 'is empty';
  if (value.length > MAX_APPLICATION_PACKAGE_LENGTH) return `is longer than ${MAX_APPLICATION_PACKAGE_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(value)) return 'contains control characters';
  return undefined;
}

const nonEmpty = z.string().trim().min(1, 'must not be empty');
const httpUrl = nonEmpty.refine(
  (value) => {
    try {
      parseHttpUrl(value, 'url');
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be an http:// or https:// URL without credentials' },
);

const platformSchema = z.strictObject({
  authUrl: httpUrl.optional(),
  clientId: nonEmpty.optional(),
  /** Name of the environment variable that holds the client secret (the recommended way). */
  clientSecretEnv: nonEmpty.optional(),
  /** Path of a file that holds the client secret (e.g. a mounted secret); trailing newlines trimmed, as for the token command. */
  clientSecretFile: nonEmpty.optional(),
  /** The secret in the config text itself: allowed because operators insist, warned about at start. */
  clientSecret: nonEmpty.optional(),
  scope: nonEmpty.optional(),
  /** Whether browsers on `https://<application>` may call the broker (CORS); default: the platform is named `web`. */
  browser: z.boolean().optional(),
});

/** Why a value cannot be a Redis URL, or undefined when it can. Never repeats the value (it may hold a password). */
export function redisUrlProblem(value: string): string | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined) return 'is not a valid redis:// URL (a port above 65535?)';
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
  if (url.hostname === '') return 'names no host';
  if (!/^\/?(\d+)?$/.test(url.pathname)) return 'may only name a database number after the host (e.g. /0)';
  return undefined;
}

const cacheSchema = z.strictObject({
  marginSeconds: z.number().int().min(0).max(3600).default(60),
  /** How long a token with neither expires_in nor exp is treated as valid. */
  noExpirySeconds: z.number().int().min(1).max(3600).default(60),
  redisUrl: nonEmpty
    .superRefine((value, ctx) => {
      const problem = redisUrlProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  redisKeyPrefix: nonEmpty.default('area-metrics:broker:'),
});

// Seconds may be fractional (0.5), so that short values can be tried out and tested.
const seconds = (max: number) => z.number().nonnegative().max(max);

const serverSchema = z
  .strictObject({
    /** How long an idle keep-alive connection is kept: above the 60 s of common load balancers, which must close first. */
    keepAliveTimeoutSeconds: seconds(3600).positive().default(65),
    /** How long a client may take to send a request's headers, counted from its first byte (idle time does not count). */
    headersTimeoutSeconds: seconds(3600).positive().optional(),
    /** How long a client may take to send a whole request. */
    requestTimeoutSeconds: seconds(3600).positive().default(10),
    /** After SIGTERM/SIGINT: how long tokens are still served (with /readyz answering 503) before the listener closes. */
    shutdownDelaySeconds: seconds(600).default(0),
    /** After the listener closes: how long in-flight requests may take before their connections are destroyed. */
    shutdownTimeoutSeconds: seconds(600).default(10),
    /** Whether the first X-Forwarded-For hop is the client (only behind a proxy that sets it). */
    trustProxy: z.boolean().default(false),
    /** Serve /metrics on this port (same host) instead of the main one, so it need not be public. */
    metricsPort: z.number().int().min(0).max(65535).optional(),
  })
  .superRefine((server, ctx) => {
    if (server.headersTimeoutSeconds !== undefined && server.headersTimeoutSeconds > server.requestTimeoutSeconds) {
      ctx.addIssue({ code: 'custom', path: ['headersTimeoutSeconds'], message: 'must not be above requestTimeoutSeconds (the headers are part of the request)' });
    }
  });

const limitsSchema = z.strictObject({
  /** Token requests one client address may make per minute before it is answered 429. */
  perClientPerMinute: z.number().int().positive().default(6000),
  /** Token requests answered at once before more are answered 503. */
  maxInFlight: z.number().int().positive().default(1000),
});

const redisSchema = z
  .strictObject({
    url: nonEmpty
      .superRefine((value, ctx) => {
        const problem = redisUrlProblem(value);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /** Redis Sentinel: where the sentinels are, and the name of the master they watch (`name`). */
    sentinels: z.array(z.strictObject({ host: nonEmpty, port: z.number().int().min(1).max(65535) })).min(1).optional(),
    name: nonEmpty.optional(),
    passwordEnv: nonEmpty.optional(),
    passwordFile: nonEmpty.optional(),
    tls: z.strictObject({ caFile: nonEmpty.optional(), certFile: nonEmpty.optional(), keyFile: nonEmpty.optional() }).optional(),
  })
  .superRefine((redis, ctx) => {
    if ((redis.url === undefined) === (redis.sentinels === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of url and sentinels' });
    }
    if (redis.sentinels !== undefined && redis.name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required with sentinels (the name of the master they watch)' });
    }
    if (redis.passwordEnv !== undefined && redis.passwordFile !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['passwordFile'], message: 'give only one of passwordEnv and passwordFile' });
    }
    if ((redis.tls?.certFile === undefined) !== (redis.tls?.keyFile === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: 'certFile and keyFile go together' });
    }
  });

export const brokerConfigSchema = z
  .strictObject({
    authUrl: httpUrl.optional(),
    platforms: z.record(nonEmpty, platformSchema),
    applications: z.record(z.string(), nonEmpty),
    cache: cacheSchema.default({ marginSeconds: 60, noExpirySeconds: 60, redisKeyPrefix: 'area-metrics:broker:' }),
    /** How long one auth-server request may take before the broker answers 503. */
    authTimeoutSeconds: z.number().positive().max(120).default(10),
    server: serverSchema.default({
      keepAliveTimeoutSeconds: 65,
      requestTimeoutSeconds: 10,
      shutdownDelaySeconds: 0,
      shutdownTimeoutSeconds: 10,
      trustProxy: false,
    }),
    limits: limitsSchema.default({ perClientPerMinute: 6000, maxInFlight: 1000 }),
    redis: redisSchema.optional(),
  })
  .superRefine((config, ctx) => {
    if (config.redis !== undefined && config.cache.redisUrl !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cache', 'redisUrl'], message: 'give Redis in one place: the redis block or cache.redisUrl' });
    }
    for (const [name, platform] of Object.entries(config.platforms)) {
      const sources = (['clientSecretEnv', 'clientSecretFile', 'clientSecret'] as const).filter(
        (key) => platform[key] !== undefined,
      );
      if (sources.length > 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['platforms', name, sources[1] as string],
          message: `give only one of clientSecretEnv, clientSecretFile, clientSecret (found ${sources.join(', ')})`,
        });
      }
      if (platform.authUrl === undefined && config.authUrl === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['platforms', name, 'authUrl'],
          message: 'no auth URL: set the top-level authUrl or this platform\'s authUrl',
        });
      }
    }
    for (const [application, platform] of Object.entries(config.applications)) {
      const problem = applicationPackageProblem(application);
      if (problem) {
        ctx.addIssue({ code: 'custom', path: ['applications', application], message: `application package ${problem}` });
      }
      if (!Object.hasOwn(config.platforms, platform)) {
        ctx.addIssue({
          code: 'custom',
          path: ['applications', application],
          message: `platform "${platform}" is not defined in platforms (defined: ${Object.keys(config.platforms).join(', ') || 'none'})`,
        });
      }
    }
  });

export type BrokerConfigFile = z.infer<typeof brokerConfigSchema>;

/** A platform's credentials as the broker uses them; `clientSecret` is absent when it could not be resolved. */
export interface PlatformCredentials {
  readonly name: string;
  readonly authUrl: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly scope?: string;
  readonly browser: boolean;
  /** Why the platform cannot get tokens (its applications get 401), or undefined when it can. */
  readonly unusableReason?: string;
  /** Where the secret is read from, when it is a file: re-read when the file changes or the secret is refused. */
  readonly clientSecretFile?: string;
}

/** Timeouts in milliseconds, and the other settings of the HTTP server. */
export interface ServerSettings {
  readonly keepAliveTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly shutdownDelayMs: number;
  readonly shutdownTimeoutMs: number;
  readonly trustProxy: boolean;
  readonly metricsPort?: number;
}

export interface LimitSettings {
  readonly perClientPerMinute: number;
  readonly maxInFlight: number;
}

/** Where Redis is and how to reach it; the password is resolved (never from argv or the config text). */
export interface RedisSettings {
  readonly url?: string;
  readonly sentinels?: readonly { readonly host: string; readonly port: number }[];
  readonly name?: string;
  readonly password?: string;
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
}

export interface BrokerConfig {
  readonly platforms: ReadonlyMap<string, PlatformCredentials>;
  /** application package → platform name */
  readonly applications: ReadonlyMap<string, string>;
  readonly marginSeconds: number;
  /** How long a token with neither expires_in nor exp is treated as valid. */
  readonly noExpiryMs: number;
  readonly redis?: RedisSettings;
  readonly redisKeyPrefix: string;
  readonly authTimeoutMs: number;
  readonly server: ServerSettings;
  readonly limits: LimitSettings;
  /** Start warnings (unset secret env vars, unreadable files, secrets in the config text). Never hold a secret. */
  readonly warnings: readonly string[];
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(top level)' : path.map((part) => String(part)).join('.');
}

/** Validation problems, one per field, naming the field (values are never echoed: they might be secrets). */
export function describeConfigIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => `${fieldName([...issue.path, key])}: unknown key`).join('; ');
      }
      // zod's wording for an absent required field ("expected record, received undefined") reads badly in a CLI.
      const message = issue.code === 'invalid_type' && issue.message.endsWith('received undefined') ? 'is required' : issue.message;
      return `${fieldName(issue.path)}: ${message}`;
    })
    .join('; ');
}

const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Absolute or explicitly relative, of the characters paths are made of: a secret pasted there does not look like this.
const PATH_LIKE = /^(?:\/|\.{1,2}\/)[A-Za-z0-9._@+/-]*$/;

/**
 * How a warning names the env var: by its name when it is one, else by the config field only. An operator who
 * pastes the secret itself where its variable's name belongs must not find it in the logs.
 */
function envVarLabel(value: string, field: string): string {
  return ENV_VAR_NAME.test(value) ? `environment variable ${value}` : `the environment variable named in ${field} (not a valid name, so not shown)`;
}

/** The same for a secret file's path. */
function pathLabel(value: string, field: string): string {
  return PATH_LIKE.test(value) ? `secret file ${value}` : `the secret file named in ${field} (not shown: it does not look like a path)`;
}

export interface ResolveOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly readFile?: (path: string) => string;
}

/** A secret file's content, or why it cannot be used (the error's own message repeats the path: only its code is kept). */
function readSecretFile(path: string, label: string, readFile: (path: string) => string): { secret?: string; problem?: string } {
  try {
    const value = secretFromFileText(readFile(path));
    return value === '' ? { problem: `${label} is empty` } : { secret: value };
  } catch (error) {
    return { problem: `${label} is not readable (${errnoCode(error) ?? 'unknown error'})` };
  }
}

/**
 * The config with one platform's secret file read again (it was rotated). Returns the same config when the secret is
 * unchanged or the platform has no secret file.
 */
export function withSecretReread(config: BrokerConfig, platformName: string, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): BrokerConfig {
  const platform = config.platforms.get(platformName);
  if (platform?.clientSecretFile === undefined || platform.clientId === undefined) return config;
  const read = readSecretFile(platform.clientSecretFile, pathLabel(platform.clientSecretFile, `platforms.${platformName}.clientSecretFile`), readFile);
  if (read.secret === platform.clientSecret && read.problem === platform.unusableReason) return config;
  const { clientSecret: _old, unusableReason: _reason, ...rest } = platform;
  const updated: PlatformCredentials = {
    ...rest,
    ...(read.secret !== undefined ? { clientSecret: read.secret } : {}),
    ...(read.problem !== undefined ? { unusableReason: read.problem } : {}),
  };
  const platforms = new Map(config.platforms);
  platforms.set(platformName, updated);
  return { ...config, platforms };
}

/** A Redis password from an env var or a file; a missing one is a start failure (a Redis that wants it would refuse). */
function redisPassword(redis: NonNullable<BrokerConfigFile['redis']>, options: ResolveOptions, readFile: (path: string) => string): string | undefined {
  if (redis.passwordEnv !== undefined) {
    const value = options.env[redis.passwordEnv];
    if (value === undefined || value === '') throw new UsageError(`redis.passwordEnv: ${envVarLabel(redis.passwordEnv, 'redis.passwordEnv')} is not set`);
    return value;
  }
  if (redis.passwordFile !== undefined) {
    const read = readSecretFile(redis.passwordFile, pathLabel(redis.passwordFile, 'redis.passwordFile'), readFile);
    if (read.secret === undefined) throw new UsageError(`redis.passwordFile: ${read.problem ?? 'unusable'}`);
    return read.secret;
  }
  return undefined;
}

function readTlsFile(path: string, field: string, readFile: (path: string) => string): string {
  try {
    return readFile(path);
  } catch (error) {
    throw new UsageError(`${field}: cannot read ${path} (${errnoCode(error) ?? 'unknown error'})`);
  }
}

function redisSettings(file: BrokerConfigFile, options: ResolveOptions, readFile: (path: string) => string): RedisSettings | undefined {
  if (file.redis === undefined) return file.cache.redisUrl === undefined ? undefined : { url: file.cache.redisUrl };
  const { url, sentinels, name, tls } = file.redis;
  const password = redisPassword(file.redis, options, readFile);
  const tlsFiles =
    tls === undefined
      ? undefined
      : {
          ...(tls.caFile !== undefined ? { ca: readTlsFile(tls.caFile, 'redis.tls.caFile', readFile) } : {}),
          ...(tls.certFile !== undefined ? { cert: readTlsFile(tls.certFile, 'redis.tls.certFile', readFile) } : {}),
          ...(tls.keyFile !== undefined ? { key: readTlsFile(tls.keyFile, 'redis.tls.keyFile', readFile) } : {}),
        };
  return {
    ...(url !== undefined ? { url } : {}),
    ...(sentinels !== undefined ? { sentinels } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(tlsFiles !== undefined ? { tls: tlsFiles } : {}),
  };
}

/**
 * Validates a parsed config and resolves the secrets. Invalid config → UsageError naming the field (exit 2);
 * an unset env var or unreadable file only makes that platform unusable (a warning at start, then 401 for its
 * applications: the other platforms keep working).
 */
export function resolveBrokerConfig(raw: unknown, options: ResolveOptions, source = 'broker config'): BrokerConfig {
  const parsed = brokerConfigSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`${source} is not valid: ${describeConfigIssues(parsed.error)}`);
  const file = parsed.data;
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const warnings: string[] = [];
  const platforms = new Map<string, PlatformCredentials>();
  for (const [name, platform] of Object.entries(file.platforms)) {
    const authUrl = (platform.authUrl ?? file.authUrl) as string; // superRefine guarantees one of them
    let clientSecret: string | undefined;
    let unusableReason: string | undefined;
    if (platform.clientSecretEnv !== undefined) {
      const value = options.env[platform.clientSecretEnv];
      const variable = envVarLabel(platform.clientSecretEnv, `platforms.${name}.clientSecretEnv`);
      if (value === undefined || value === '') unusableReason = `${variable} is not set`;
      else clientSecret = value;
    } else if (platform.clientSecretFile !== undefined) {
      const read = readSecretFile(platform.clientSecretFile, pathLabel(platform.clientSecretFile, `platforms.${name}.clientSecretFile`), readFile);
      clientSecret = read.secret;
      unusableReason = read.problem;
    } else if (platform.clientSecret !== undefined) {
      clientSecret = platform.clientSecret;
      warnings.push(
        `platforms.${name}.clientSecret: the client secret is written in the config file; prefer clientSecretEnv or clientSecretFile`,
      );
    } else {
      unusableReason = 'no client secret configured (clientSecretEnv, clientSecretFile or clientSecret)';
    }
    if (platform.clientId === undefined) unusableReason = 'no clientId configured';
    if (unusableReason) {
      clientSecret = undefined;
      warnings.push(`platforms.${name}: ${unusableReason}; its applications will be answered 401`);
    }
    platforms.set(name, {
      name,
      authUrl,
      ...(platform.clientId !== undefined ? { clientId: platform.clientId } : {}),
      ...(clientSecret !== undefined ? { clientSecret } : {}),
      ...(platform.scope !== undefined ? { scope: platform.scope } : {}),
      browser: platform.browser ?? name === 'web',
      ...(unusableReason !== undefined ? { unusableReason } : {}),
      ...(platform.clientSecretFile !== undefined ? { clientSecretFile: platform.clientSecretFile } : {}),
    });
  }
  const redis = redisSettings(file, options, readFile);
  const server = file.server;
  return {
    platforms,
    applications: new Map(Object.entries(file.applications)),
    marginSeconds: file.cache.marginSeconds,
    noExpiryMs: file.cache.noExpirySeconds * 1000,
    ...(redis !== undefined ? { redis } : {}),
    redisKeyPrefix: file.cache.redisKeyPrefix,
    authTimeoutMs: Math.round(file.authTimeoutSeconds * 1000),
    server: {
      keepAliveTimeoutMs: Math.round(server.keepAliveTimeoutSeconds * 1000),
      headersTimeoutMs: Math.round((server.headersTimeoutSeconds ?? server.requestTimeoutSeconds) * 1000),
      requestTimeoutMs: Math.round(server.requestTimeoutSeconds * 1000),
      shutdownDelayMs: Math.round(server.shutdownDelaySeconds * 1000),
      shutdownTimeoutMs: Math.round(server.shutdownTimeoutSeconds * 1000),
      trustProxy: server.trustProxy,
      ...(server.metricsPort !== undefined ? { metricsPort: server.metricsPort } : {}),
    },
    limits: file.limits,
    warnings,
  };
}

/** Reads and resolves a config file; a missing file or invalid JSON is a UsageError (exit 2). */
export function loadBrokerConfig(path: string, options: ResolveOptions): BrokerConfig {
  let text: string;
  try {
    text = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path);
  } catch (error) {
    throw new UsageError(`cannot read broker config ${path}: ${errnoCode(error) ?? messageOf(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error, which may be a secret: say only what is wrong.
    throw new UsageError(`broker config ${path} is not valid JSON`);
  }
  return resolveBrokerConfig(raw, options, `broker config ${path}`);
}
