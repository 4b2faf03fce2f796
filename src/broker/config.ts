import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseHttpUrl } from '../auth/client-credentials.js';
import { secretFromFileText } from '../auth/secret-file.js';
import { UsageError, messageOf } from '../errors.js';

/** SPEC 4 / seed 2.4: an application package is an Android package, an iOS bundle id or a web domain. */
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

export const brokerConfigSchema = z
  .strictObject({
    authUrl: httpUrl.optional(),
    platforms: z.record(nonEmpty, platformSchema),
    applications: z.record(z.string(), nonEmpty),
    cache: cacheSchema.default({ marginSeconds: 60, noExpirySeconds: 60, redisKeyPrefix: 'area-metrics:broker:' }),
    /** How long one auth-server request may take before the broker answers 503. */
    authTimeoutSeconds: z.number().positive().max(120).default(10),
  })
  .superRefine((config, ctx) => {
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
}

export interface BrokerConfig {
  readonly platforms: ReadonlyMap<string, PlatformCredentials>;
  /** application package → platform name */
  readonly applications: ReadonlyMap<string, string>;
  readonly marginSeconds: number;
  /** How long a token with neither expires_in nor exp is treated as valid. */
  readonly noExpiryMs: number;
  readonly redisUrl?: string;
  readonly redisKeyPrefix: string;
  readonly authTimeoutMs: number;
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

/**
 * Validates a parsed config and resolves the secrets. Invalid config → UsageError naming the field (exit 2);
 * an unset env var or unreadable file only makes that platform unusable (warning, then 401 per seed section 7).
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
      const file = pathLabel(platform.clientSecretFile, `platforms.${name}.clientSecretFile`);
      try {
        const value = secretFromFileText(readFile(platform.clientSecretFile));
        if (value === '') unusableReason = `${file} is empty`;
        else clientSecret = value;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        // The error's own message repeats the path; only its code is kept.
        unusableReason = `${file} is not readable (${typeof code === 'string' ? code : 'unknown error'})`;
      }
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
    });
  }
  return {
    platforms,
    applications: new Map(Object.entries(file.applications)),
    marginSeconds: file.cache.marginSeconds,
    noExpiryMs: file.cache.noExpirySeconds * 1000,
    ...(file.cache.redisUrl !== undefined ? { redisUrl: file.cache.redisUrl } : {}),
    redisKeyPrefix: file.cache.redisKeyPrefix,
    authTimeoutMs: Math.round(file.authTimeoutSeconds * 1000),
    warnings,
  };
}

/** Reads and resolves a config file; a missing file or invalid JSON is a UsageError (exit 2). */
export function loadBrokerConfig(path: string, options: ResolveOptions): BrokerConfig {
  let text: string;
  try {
    text = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`cannot read broker config ${path}: ${typeof code === 'string' ? code : messageOf(error)}`);
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
