import { readFileSync } from 'node:fs';
import { parseConfigJson } from './config-json.js';
import { secretFromFileText } from '../../auth/secret-file.js';
import { errnoCode, UsageError, messageOf } from '../../errors.js';
import { attestationSettings, type AttestationSettings } from './attestation-settings.js';
import { brokerConfigSchema, describeConfigIssues, platformOfEntry, type BrokerConfigFile } from './config-schema.js';

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
  /** application package → its attestation app id (from the object form of an application). */
  readonly appIds: ReadonlyMap<string, string>;
  /** Absent when attestation is off. */
  readonly attestation?: AttestationSettings;
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

const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Absolute or explicitly relative, of the characters paths are made of: a secret pasted there does not look like this.
const PATH_LIKE = /^(?:\/|\.{1,2}\/)[A-Za-z0-9._@+/-]*$/;

/**
 * How a warning names the env var: by its name when it is one, else by the config field only. An operator who
 * pastes the secret itself where its variable's name belongs must not find it in the logs.
 */
function envVarLabel(value: string, field: string): string {
  return ENV_VAR_NAME.test(value)
    ? `environment variable ${value}`
    : `the environment variable named in ${field} (not a valid name, so not shown)`;
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
export function withSecretReread(
  config: BrokerConfig,
  platformName: string,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): BrokerConfig {
  const platform = config.platforms.get(platformName);
  if (platform?.clientSecretFile === undefined || platform.clientId === undefined) return config;
  const read = readSecretFile(
    platform.clientSecretFile,
    pathLabel(platform.clientSecretFile, `platforms.${platformName}.clientSecretFile`),
    readFile,
  );
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
function redisPassword(
  redis: NonNullable<BrokerConfigFile['redis']>,
  options: ResolveOptions,
  readFile: (path: string) => string,
): string | undefined {
  if (redis.passwordEnv !== undefined) {
    const value = options.env[redis.passwordEnv];
    if (value === undefined || value === '')
      throw new UsageError(`redis.passwordEnv: ${envVarLabel(redis.passwordEnv, 'redis.passwordEnv')} is not set`);
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
      const read = readSecretFile(
        platform.clientSecretFile,
        pathLabel(platform.clientSecretFile, `platforms.${name}.clientSecretFile`),
        readFile,
      );
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
  const attestation = attestationSettings(file.attestation);
  const server = file.server;
  return {
    platforms,
    applications: new Map(Object.entries(file.applications).map(([application, entry]) => [application, platformOfEntry(entry)])),
    appIds: new Map(
      Object.entries(file.applications).flatMap(([application, entry]) =>
        typeof entry === 'object' && entry.appId !== undefined ? [[application, entry.appId]] : [],
      ),
    ),
    ...(attestation !== undefined ? { attestation } : {}),
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
  return resolveBrokerConfig(parseConfigJson(text, `broker config ${path}`), options, `broker config ${path}`);
}
