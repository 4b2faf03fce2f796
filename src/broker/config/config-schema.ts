import { z } from 'zod';
import { parseHttpUrl } from '../../http-url.js';

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

export const ATTESTATION_MODES = ['off', 'report', 'enforce'] as const;
export const ATTESTATION_PROVIDERS = ['firebase-app-check', 'jwt'] as const;

const nonEmpty = z.string().trim().min(1, 'must not be empty');
const httpUrl = nonEmpty.refine(
  (value) => {
    try {
      parseHttpUrl(value, 'url', {
        example: 'https://auth.example.com',
        credentialsBelong: 'name the secrets in the config, not in the URL',
      });
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
      ctx.addIssue({
        code: 'custom',
        path: ['headersTimeoutSeconds'],
        message: 'must not be above requestTimeoutSeconds (the headers are part of the request)',
      });
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
    sentinels: z
      .array(z.strictObject({ host: nonEmpty, port: z.number().int().min(1).max(65535) }))
      .min(1)
      .optional(),
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

// An HTTP header name (RFC 9110 token characters).
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An application: its platform's name, or an object that also gives its App Check app id. */
const applicationSchema = z.union([nonEmpty, z.strictObject({ platform: nonEmpty, appId: nonEmpty.optional() })]);

/** The `attestation` block; which fields a provider needs is checked with the applications (see attestationIssues). */
const attestationSchema = z.strictObject({
  mode: z.enum(ATTESTATION_MODES).default('off'),
  // A plain string, so that an unknown provider is named in the message.
  provider: nonEmpty.optional(),
  projectNumber: z.union([z.string().regex(/^\d{1,20}$/, 'must be the project number (digits)'), z.number().int().positive()]).optional(),
  issuer: nonEmpty.optional(),
  audience: nonEmpty.optional(),
  jwksUrl: httpUrl.optional(),
  header: z.string().regex(HEADER_NAME, 'must be an HTTP header name').optional(),
  appClaim: nonEmpty.optional(),
  singleUse: z.boolean().default(false),
});

export type AttestationBlock = z.infer<typeof attestationSchema>;

/** A field another provider's config has, for the message that says it is not used. */
const FIELDS_OF: Record<(typeof ATTESTATION_PROVIDERS)[number], readonly (keyof AttestationBlock)[]> = {
  'firebase-app-check': ['projectNumber'],
  jwt: ['issuer', 'audience', 'header', 'appClaim'],
};
const REQUIRED: Record<(typeof ATTESTATION_PROVIDERS)[number], readonly (keyof AttestationBlock)[]> = {
  'firebase-app-check': ['projectNumber'],
  jwt: ['issuer', 'audience', 'jwksUrl', 'header'],
};

/**
 * Why an attestation config cannot be enforced, one issue per field: the provider and its fields, and every
 * application's `appId` (the token names the app it was issued to). Attestation off needs none of it.
 */
function attestationIssues(
  attestation: AttestationBlock | undefined,
  applications: Record<string, z.infer<typeof applicationSchema>>,
): { path: (string | number)[]; message: string }[] {
  if (attestation === undefined || attestation.mode === 'off') return [];
  const issues: { path: (string | number)[]; message: string }[] = [];
  const provider = attestation.provider;
  const known = (ATTESTATION_PROVIDERS as readonly string[]).includes(provider ?? '')
    ? (provider as (typeof ATTESTATION_PROVIDERS)[number])
    : undefined;
  if (known === undefined) {
    const message =
      provider === undefined
        ? `is required when mode is ${attestation.mode} (${ATTESTATION_PROVIDERS.join(' or ')})`
        : `unknown provider ${JSON.stringify(provider)} (known: ${ATTESTATION_PROVIDERS.join(', ')})`;
    issues.push({ path: ['attestation', 'provider'], message });
  } else {
    for (const field of REQUIRED[known]) {
      if (attestation[field] === undefined) issues.push({ path: ['attestation', field], message: `is required with provider ${known}` });
    }
    for (const [other, fields] of Object.entries(FIELDS_OF)) {
      if (other === known) continue;
      for (const field of fields) {
        if (attestation[field] !== undefined)
          issues.push({ path: ['attestation', field], message: `is for provider ${other}, not ${known}` });
      }
    }
  }
  for (const [application, entry] of Object.entries(applications)) {
    if (typeof entry === 'string' || entry.appId === undefined) {
      issues.push({
        path: ['applications', application],
        message: `no appId: attestation (mode ${attestation.mode}) needs {"platform": "...", "appId": "..."} for every application`,
      });
    }
  }
  return issues;
}

/** The platform an application entry names (either form). */
export function platformOfEntry(entry: z.infer<typeof applicationSchema>): string {
  return typeof entry === 'string' ? entry : entry.platform;
}

export const brokerConfigSchema = z
  .strictObject({
    authUrl: httpUrl.optional(),
    platforms: z.record(nonEmpty, platformSchema),
    applications: z.record(z.string(), applicationSchema),
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
    attestation: attestationSchema.optional(),
  })
  .superRefine((config, ctx) => {
    if (config.redis !== undefined && config.cache.redisUrl !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cache', 'redisUrl'], message: 'give Redis in one place: the redis block or cache.redisUrl' });
    }
    for (const [name, platform] of Object.entries(config.platforms)) {
      const sources = (['clientSecretEnv', 'clientSecretFile', 'clientSecret'] as const).filter((key) => platform[key] !== undefined);
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
          message: "no auth URL: set the top-level authUrl or this platform's authUrl",
        });
      }
    }
    for (const [application, entry] of Object.entries(config.applications)) {
      const platform = platformOfEntry(entry);
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
    for (const issue of attestationIssues(config.attestation, config.applications)) ctx.addIssue({ code: 'custom', ...issue });
  });

export type BrokerConfigFile = z.infer<typeof brokerConfigSchema>;

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
