import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBrokerConfig, resolveBrokerConfig } from '../../../src/broker/config/config.js';
import { applicationPackageProblem } from '../../../src/broker/config/config-schema.js';
import { usageMessage } from '../../helpers/usage-error.js';

const SECRET = 'android-secret-value-42';

function validRaw(): Record<string, unknown> {
  return {
    authUrl: 'https://auth.example.com',
    platforms: {
      android: { clientId: 'android-id', clientSecretEnv: 'ANDROID_SECRET' },
      ios: { clientId: 'ios-id', clientSecretEnv: 'IOS_SECRET' },
      web: { authUrl: 'https://web-auth.example.com/', clientId: 'web-id', clientSecretFile: '/run/secrets/web', scope: 'sdk' },
    },
    applications: { 'com.acme.shop': 'android', 'com.acme.ShopApp': 'ios', 'shop.acme.example': 'web' },
    cache: { marginSeconds: 45 },
  };
}

describe('resolveBrokerConfig', () => {
  it('resolves secrets from env vars and files (trailing newline trimmed), platform authUrl overriding the top one', () => {
    const config = resolveBrokerConfig(validRaw(), {
      env: { ANDROID_SECRET: SECRET, IOS_SECRET: 'ios-secret' },
      readFile: (path) => (path === '/run/secrets/web' ? 'web-secret\n' : ''),
    });
    expect(config.warnings).toEqual([]);
    expect(config.marginSeconds).toBe(45);
    expect(config.authTimeoutMs).toBe(10_000);
    expect(config.platforms.get('android')).toMatchObject({ authUrl: 'https://auth.example.com', clientSecret: SECRET, browser: false });
    expect(config.platforms.get('web')).toMatchObject({
      authUrl: 'https://web-auth.example.com/',
      clientSecret: 'web-secret',
      scope: 'sdk',
      browser: true,
    });
    expect(config.applications.get('com.acme.ShopApp')).toBe('ios');
  });

  it('trims a secret file like the token command does: every trailing LF or CRLF, nothing else', () => {
    const secretIn = (text: string): string | undefined =>
      resolveBrokerConfig(validRaw(), { env: { ANDROID_SECRET: SECRET, IOS_SECRET: 'i' }, readFile: () => text }).platforms.get('web')
        ?.clientSecret;
    expect(secretIn('web-secret\r\n\n')).toBe('web-secret');
    expect(secretIn(' web secret \n')).toBe(' web secret ');
  });

  it('defaults the margin to 60 s', () => {
    const raw = validRaw();
    delete raw.cache;
    expect(resolveBrokerConfig(raw, { env: {}, readFile: () => 'x' }).marginSeconds).toBe(60);
  });

  it('turns an unset or empty env var and an unreadable file into warnings and unusable platforms, not failures', () => {
    const config = resolveBrokerConfig(validRaw(), {
      env: { ANDROID_SECRET: '' },
      readFile: () => {
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      },
    });
    expect(config.warnings).toHaveLength(3);
    expect(config.warnings.join('\n')).toMatch(/platforms\.android: environment variable ANDROID_SECRET is not set/);
    expect(config.warnings.join('\n')).toMatch(/platforms\.web: secret file \/run\/secrets\/web is not readable \(ENOENT\)/);
    expect(config.platforms.get('ios')?.unusableReason).toMatch(/IOS_SECRET/);
    expect(config.platforms.get('ios')?.clientSecret).toBeUndefined();
  });

  it('warns about a secret written in the config text, without repeating it', () => {
    const raw = validRaw();
    (raw.platforms as Record<string, unknown>).android = { clientId: 'a', clientSecret: SECRET };
    const config = resolveBrokerConfig(raw, { env: { IOS_SECRET: 'x' }, readFile: () => 'y' });
    expect(config.platforms.get('android')?.clientSecret).toBe(SECRET);
    expect(config.warnings.join('\n')).toMatch(/platforms\.android\.clientSecret/);
    expect(config.warnings.join('\n')).not.toContain(SECRET);
  });

  it('rejects unknown keys, naming them', () => {
    const raw = validRaw();
    raw.colour = 'blue';
    expect(usageMessage(() => resolveBrokerConfig(raw, { env: {} }))).toMatch(/colour: unknown key/);
    const nested = validRaw();
    (nested.platforms as Record<string, Record<string, unknown>>).ios!.clientSecretEnvv = 'X';
    expect(usageMessage(() => resolveBrokerConfig(nested, { env: {} }))).toMatch(/platforms\.ios\.clientSecretEnvv: unknown key/);
  });

  it('rejects an application mapped to a platform that is not defined', () => {
    const raw = validRaw();
    (raw.applications as Record<string, string>)['com.acme.tv'] = 'tvos';
    expect(usageMessage(() => resolveBrokerConfig(raw, { env: {} }))).toMatch(
      /applications\.com\.acme\.tv: platform "tvos" is not defined/,
    );
  });

  it('rejects a config without an auth URL for a platform', () => {
    const raw = validRaw();
    delete raw.authUrl;
    const message = usageMessage(() => resolveBrokerConfig(raw, { env: {} }));
    expect(message).toMatch(/platforms\.android\.authUrl: no auth URL/);
    expect(message).not.toMatch(/platforms\.web\.authUrl/);
  });

  it('rejects bad values, naming the field, and never echoes a secret', () => {
    const raw = validRaw();
    raw.cache = { marginSeconds: -1 };
    expect(usageMessage(() => resolveBrokerConfig(raw, { env: {} }))).toMatch(/cache\.marginSeconds/);
    const badUrl = validRaw();
    badUrl.authUrl = 'ftp://auth.example.com';
    expect(usageMessage(() => resolveBrokerConfig(badUrl, { env: {} }))).toMatch(/^broker config is not valid: authUrl: must be an http/);
    const twoSources = validRaw();
    (twoSources.platforms as Record<string, unknown>).android = { clientId: 'a', clientSecretEnv: 'A', clientSecret: SECRET };
    const message = usageMessage(() => resolveBrokerConfig(twoSources, { env: {} }));
    expect(message).toMatch(/platforms\.android\.clientSecret: give only one of/);
    expect(message).not.toContain(SECRET);
    expect(usageMessage(() => resolveBrokerConfig({ platforms: {}, applications: {}, authUrl: 'x' }, { env: {} }))).toMatch(/authUrl/);
    expect(usageMessage(() => resolveBrokerConfig([], { env: {} }))).toMatch(/\(top level\)/);
  });

  it('rejects application keys that could never be requested', () => {
    const raw = validRaw();
    (raw.applications as Record<string, string>)['bad\u0001app'] = 'android';
    expect(usageMessage(() => resolveBrokerConfig(raw, { env: {} }))).toMatch(/contains control characters/);
  });
});

describe('loadBrokerConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'broker-config-'));

  it('fails with a UsageError for a missing file and for text that is not JSON, without quoting the text', () => {
    expect(usageMessage(() => loadBrokerConfig(join(dir, 'nope.json'), { env: {} }))).toMatch(/cannot read broker config .*ENOENT/);
    const path = join(dir, 'bad.json');
    writeFileSync(path, `{"platforms": {"clientSecret": ${SECRET}}`);
    const message = usageMessage(() => loadBrokerConfig(path, { env: {} }));
    expect(message).toMatch(/is not valid JSON/);
    expect(message).not.toContain(SECRET);
  });

  it('reads a real file and a real secret file', () => {
    const secretPath = join(dir, 'web-secret');
    writeFileSync(secretPath, 'from-file\r\n');
    const raw = validRaw();
    (raw.platforms as Record<string, Record<string, unknown>>).web!.clientSecretFile = secretPath;
    const path = join(dir, 'ok.json');
    writeFileSync(path, JSON.stringify(raw));
    const config = loadBrokerConfig(path, { env: { ANDROID_SECRET: 'a', IOS_SECRET: 'b' } });
    expect(config.platforms.get('web')?.clientSecret).toBe('from-file');
  });
});

describe('applicationPackageProblem', () => {
  it('accepts package names, bundle ids and domains; refuses empty, long and control characters', () => {
    expect(applicationPackageProblem('com.acme.shop')).toBeUndefined();
    expect(applicationPackageProblem('shop.acme.example')).toBeUndefined();
    expect(applicationPackageProblem('x'.repeat(255))).toBeUndefined();
    expect(applicationPackageProblem('')).toBe('is empty');
    expect(applicationPackageProblem('x'.repeat(256))).toMatch(/longer than 255/);
    expect(applicationPackageProblem('a\nb')).toMatch(/control/);
    expect(applicationPackageProblem('a\u007fb')).toMatch(/control/);
  });
});

describe('server, limits and redis blocks', () => {
  const resolve = (
    extra: Record<string, unknown>,
    env: NodeJS.ProcessEnv = { ANDROID_SECRET: SECRET },
    readFile?: (path: string) => string,
  ) =>
    resolveBrokerConfig({ ...validRaw(), ...extra }, { env, readFile: readFile ?? ((path) => (path === '/run/secrets/web' ? 'web' : '')) });

  it('defaults to the timeouts a load balancer expects and to limits, and takes fractional seconds', () => {
    const config = resolve({});
    expect(config.server).toEqual({
      keepAliveTimeoutMs: 65_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      shutdownDelayMs: 0,
      shutdownTimeoutMs: 10_000,
      trustProxy: false,
    });
    expect(config.limits).toEqual({ perClientPerMinute: 6000, maxInFlight: 1000 });
    expect(resolve({ server: { keepAliveTimeoutSeconds: 0.5, shutdownDelaySeconds: 1.25 } }).server).toMatchObject({
      keepAliveTimeoutMs: 500,
      shutdownDelayMs: 1250,
    });
  });

  it('names the field of a wrong server, limits or redis setting', () => {
    expect(usageMessage(() => resolve({ server: { headersTimeoutSeconds: 20 } }))).toMatch(
      /server\.headersTimeoutSeconds: must not be above requestTimeoutSeconds/,
    );
    expect(usageMessage(() => resolve({ limits: { maxInFlight: 0 } }))).toMatch(/limits\.maxInFlight/);
    expect(usageMessage(() => resolve({ redis: { sentinels: [{ host: 'a', port: 26379 }] } }))).toMatch(
      /redis\.name: is required with sentinels/,
    );
    expect(usageMessage(() => resolve({ redis: { url: 'redis://a', sentinels: [{ host: 'a', port: 26379 }], name: 'm' } }))).toMatch(
      /redis\.url: give exactly one/,
    );
    expect(usageMessage(() => resolve({ redis: { url: 'redis://a' }, cache: { redisUrl: 'redis://b' } }))).toMatch(
      /cache\.redisUrl: give Redis in one place/,
    );
    expect(usageMessage(() => resolve({ redis: { url: 'redis://a', passwordEnv: 'REDIS_PASSWORD' } }))).toMatch(
      /redis\.passwordEnv: environment variable REDIS_PASSWORD is not set/,
    );
  });

  it('reads the Redis password from an env var or a file and the TLS files, never echoing them', () => {
    const files: Record<string, string> = {
      '/run/secrets/web': 'web',
      '/run/redis/password': 'redis-pass-9\n',
      '/tls/ca.pem': 'CA',
      '/tls/c.pem': 'CERT',
      '/tls/k.pem': 'KEY',
    };
    const config = resolve(
      {
        redis: {
          sentinels: [{ host: 's1', port: 26379 }],
          name: 'main',
          passwordFile: '/run/redis/password',
          tls: { caFile: '/tls/ca.pem', certFile: '/tls/c.pem', keyFile: '/tls/k.pem' },
        },
      },
      { ANDROID_SECRET: SECRET },
      (path) => files[path] ?? '',
    );
    expect(config.redis).toEqual({
      sentinels: [{ host: 's1', port: 26379 }],
      name: 'main',
      password: 'redis-pass-9',
      tls: { ca: 'CA', cert: 'CERT', key: 'KEY' },
    });
    expect(
      resolve({ redis: { url: 'rediss://r:6380', passwordEnv: 'REDIS_PASSWORD' } }, { ANDROID_SECRET: SECRET, REDIS_PASSWORD: 'pw' }).redis,
    ).toEqual({ url: 'rediss://r:6380', password: 'pw' });
  });
});

describe('attestation block', () => {
  const env = { ANDROID_SECRET: SECRET, IOS_SECRET: 'ios-secret' };
  const readFile = (): string => 'web-secret';
  const withApps = {
    'com.acme.shop': { platform: 'android', appId: '1:123456789:android:abc' },
    'com.acme.ShopApp': { platform: 'ios', appId: '1:123456789:ios:def' },
    'shop.acme.example': { platform: 'web', appId: '1:123456789:web:0a1' },
  };
  const firebase = { mode: 'enforce', provider: 'firebase-app-check', projectNumber: '123456789' };
  const resolve = (attestation: unknown, applications: unknown = withApps) =>
    resolveBrokerConfig({ ...validRaw(), applications, attestation }, { env, readFile });

  it('resolves Firebase App Check and the object form of an application', () => {
    const config = resolve(firebase);
    expect(config.attestation).toEqual({
      mode: 'enforce',
      provider: 'firebase-app-check',
      header: 'X-Firebase-AppCheck',
      issuer: 'https://firebaseappcheck.googleapis.com/123456789',
      audience: 'projects/123456789',
      jwksUrl: 'https://firebaseappcheck.googleapis.com/v1/jwks',
      appClaim: 'sub',
      singleUse: false,
    });
    expect(config.applications.get('com.acme.shop')).toBe('android');
    expect(config.appIds.get('com.acme.shop')).toBe('1:123456789:android:abc');
    expect(resolve({ ...firebase, projectNumber: 123456789, mode: 'report' }).attestation?.issuer).toBe(
      'https://firebaseappcheck.googleapis.com/123456789',
    );
  });

  it('is off by default and when off takes both forms of an application, asking nothing more', () => {
    expect(resolveBrokerConfig(validRaw(), { env, readFile }).attestation).toBeUndefined();
    const off = resolve({ mode: 'off' }, { 'com.acme.shop': 'android', 'com.acme.ShopApp': { platform: 'ios' } });
    expect(off.attestation).toBeUndefined();
    expect(off.applications.get('com.acme.ShopApp')).toBe('ios');
  });

  it('refuses a config that cannot be enforced, naming the application or the field', () => {
    const cases: [unknown, unknown, RegExp][] = [
      [
        firebase,
        { ...withApps, 'com.acme.shop': 'android' },
        /applications\.com\.acme\.shop: no appId: attestation \(mode enforce\) needs/,
      ],
      [
        { ...firebase, mode: 'report' },
        { ...withApps, 'com.acme.ShopApp': { platform: 'ios' } },
        /applications\.com\.acme\.ShopApp: no appId/,
      ],
      [
        { ...firebase, provider: 'device-check' },
        withApps,
        /attestation\.provider: unknown provider "device-check" \(known: firebase-app-check, jwt\)/,
      ],
      [{ mode: 'enforce' }, withApps, /attestation\.provider: is required when mode is enforce/],
      [
        { mode: 'enforce', provider: 'firebase-app-check' },
        withApps,
        /attestation\.projectNumber: is required with provider firebase-app-check/,
      ],
      [{ ...firebase, projectNumber: 'my-project' }, withApps, /attestation\.projectNumber/],
      [{ ...firebase, issuer: 'https://elsewhere.example' }, withApps, /attestation\.issuer: is for provider jwt, not firebase-app-check/],
      [
        { mode: 'enforce', provider: 'jwt', header: 'X-Attest', jwksUrl: 'https://attest.example/jwks' },
        withApps,
        /attestation\.issuer: is required with provider jwt; attestation\.audience: is required/,
      ],
      [
        { mode: 'enforce', provider: 'jwt', issuer: 'i', audience: 'a', jwksUrl: 'https://attest.example/jwks' },
        withApps,
        /attestation\.header: is required with provider jwt/,
      ],
      [{ ...firebase, jwksUrl: 'ftp://keys.example' }, withApps, /attestation\.jwksUrl: must be an http/],
      [
        { mode: 'enforce', provider: 'jwt', issuer: 'i', audience: 'a', jwksUrl: 'https://x.example', header: 'X Bad' },
        withApps,
        /attestation\.header: must be an HTTP header name/,
      ],
      [{ ...firebase, mode: 'strict' }, withApps, /attestation\.mode/],
      [{ ...firebase, colour: 'blue' }, withApps, /attestation\.colour: unknown key/],
      [
        firebase,
        { ...withApps, 'com.acme.shop': { platform: 'android', appId: 'x', extra: 1 } },
        /applications\.com\.acme\.shop\.extra: unknown key/,
      ],
    ];
    for (const [attestation, applications, message] of cases)
      expect(usageMessage(() => resolve(attestation, applications))).toMatch(message);
  });
});
