import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { listenOnLoopback } from '../helpers/loopback.js';
import { waitUntil } from '../helpers/cli.js';
import { startFakeAuthServer } from '../helpers/fake-auth-server.js';
import { resolveBrokerConfig, type BrokerConfig } from '../../src/broker/config/config.js';
import type { BrokerDeps } from '../../src/broker/http/server.js';
import { TestClock, injectedBroker, type TestBroker } from './broker-harness.js';

/** The Firebase project of the tests, and the App Check app ids of the test applications. */
/** The header an App Check token comes in. */
export const APP_CHECK_HEADER = 'X-Firebase-AppCheck';
export const PROJECT_NUMBER = '123456789';
export const ANDROID_APP_ID = `1:${PROJECT_NUMBER}:android:0a1b2c3d`;
export const IOS_APP_ID = `1:${PROJECT_NUMBER}:ios:4e5f6a7b`;

/** A signing key of the issuer: its private half signs tokens, its public JWK is what the JWKS publishes. */
export interface IssuerKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function issuerKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, publicJwk };
}

/** The same key pair published under another kid (key generation is slow: tests share a few pairs). */
export function withKid(key: IssuerKey, kid: string): IssuerKey {
  return { ...key, kid, publicJwk: { ...key.publicJwk, kid } };
}

/**
 * A JWKS issuer on loopback, as Firebase App Check's `/v1/jwks` serves one: the keys published, a Cache-Control
 * max-age, and switches for an issuer that is down (connections reset) or answers an error.
 */
export interface TestIssuer {
  readonly jwksUrl: string;
  /** How many times the JWKS was asked for. */
  fetches(): number;
  publish(keys: readonly IssuerKey[]): void;
  setMaxAgeSeconds(seconds: number | undefined): void;
  /** Down: every connection is reset, as when the issuer cannot be reached. */
  setDown(down: boolean): void;
  /** Hanging: requests get no answer until it stops hanging, when each is answered with the keys then published. */
  setHanging(hanging: boolean): void;
  close(): Promise<void>;
}

export async function startIssuer(keys: readonly IssuerKey[], maxAgeSeconds: number | undefined = 3600): Promise<TestIssuer> {
  let published = keys;
  let maxAge: number | undefined = maxAgeSeconds;
  let down = false;
  let fetches = 0;
  let hanging = false;
  const held: (() => void)[] = [];
  const server: Server = createServer((request, response) => {
    if (down) {
      request.socket.destroy();
      return;
    }
    fetches += 1;
    if (hanging) {
      held.push(() => answer(response));
      return;
    }
    answer(response);
  });
  const answer = (response: ServerResponse): void => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (maxAge !== undefined) headers['cache-control'] = `public, max-age=${maxAge}, must-revalidate, no-transform`;
    response.writeHead(200, headers).end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }));
  };
  const listening = await listenOnLoopback(server);
  return {
    jwksUrl: `${listening.url}/v1/jwks`,
    fetches: () => fetches,
    publish: (next) => {
      published = next;
    },
    setMaxAgeSeconds: (seconds) => {
      maxAge = seconds;
    },
    setHanging: (value) => {
      hanging = value;
      if (!value) for (const release of held.splice(0)) release();
    },
    setDown: (value) => {
      down = value;
      if (value) listening.dropConnections();
    },
    close: listening.close,
  };
}

/** The claims of a genuine App Check token for `appId`, issued at `nowMs` and valid for an hour. */
export function appCheckClaims(appId: string, nowMs: number, project = PROJECT_NUMBER): JWTPayload {
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: `https://firebaseappcheck.googleapis.com/${project}`,
    aud: [`projects/${project}`, 'projects/acme-shop'],
    sub: appId,
    iat,
    exp: iat + 3600,
    jti: randomUUID(),
  };
}

/** A token signed by `key` under `kid` (default the key's own) with these claims. */
export function signToken(key: IssuerKey, claims: JWTPayload, kid: string = key.kid): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid, typ: 'JWT' }).sign(key.privateKey);
}

/** An unsigned token (`alg: none`) naming a published kid. */
export function unsignedToken(kid: string, claims: JWTPayload): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', kid, typ: 'JWT' })}.${part(claims)}.`;
}

/** Algorithm confusion: HS256 with the issuer's public key (its PEM, as a verifier might hold it) as the secret. */
export async function hmacWithPublicKey(key: IssuerKey, claims: JWTPayload): Promise<string> {
  const secret = new TextEncoder().encode(await exportSPKI(key.publicKey));
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' }).sign(secret);
}

/** The app every App Check test asks for: an Android app of the issuer's project. */
export const APP = 'com.acme.shop';

/**
 * A broker config with App Check enforced against `jwksUrl` for the Android `APP` (and more `applications`, each on a
 * platform with the same client), its client `clientId` with the secret from the env var SECRET.
 */
export function enforcedConfig(options: {
  readonly authUrl: string;
  readonly jwksUrl: string;
  readonly clientId: string;
  readonly secret: string;
  readonly singleUse?: boolean;
  readonly more?: Readonly<Record<string, { readonly platform: 'ios' | 'web'; readonly appId: string }>>;
}): BrokerConfig {
  const platform = { clientId: options.clientId, clientSecretEnv: 'SECRET' };
  const more = options.more ?? {};
  return resolveBrokerConfig(
    {
      authUrl: options.authUrl,
      platforms: { android: platform, ...Object.fromEntries(Object.values(more).map(({ platform: name }) => [name, platform])) },
      applications: { [APP]: { platform: 'android', appId: ANDROID_APP_ID }, ...more },
      limits: { perClientPerMinute: 1_000_000 },
      attestation: {
        mode: 'enforce',
        provider: 'firebase-app-check',
        projectNumber: PROJECT_NUMBER,
        jwksUrl: options.jwksUrl,
        ...(options.singleUse ? { singleUse: true } : {}),
      },
    },
    { env: { SECRET: options.secret } },
  );
}

/** What an App Check test's broker is built from: the keys its issuer publishes and the client its auth server knows. */
export interface AttestedSetup {
  readonly keys: readonly IssuerKey[];
  readonly maxAgeSeconds?: number;
  readonly clientId: string;
  readonly secret: string;
  readonly singleUse?: boolean;
  readonly more?: Parameters<typeof enforcedConfig>[0]['more'];
}

/** The issuer and the auth server of `setup`, started (their closers pushed onto `stops`), and the config that uses them. */
export async function startAttestation(
  stops: (() => Promise<void>)[],
  setup: AttestedSetup,
): Promise<{ issuer: TestIssuer; config: BrokerConfig }> {
  const issuer = await startIssuer(setup.keys, setup.maxAgeSeconds);
  stops.push(() => issuer.close());
  const auth = await startFakeAuthServer({ clientId: setup.clientId, clientSecret: setup.secret });
  stops.push(() => auth.close());
  const { clientId, secret, singleUse, more } = setup;
  return { issuer, config: enforcedConfig({ authUrl: auth.url, jwksUrl: issuer.jwksUrl, clientId, secret, singleUse, more }) };
}

/**
 * An injected broker enforcing App Check on `setup`, on a clock the test moves, once it holds the issuer's first key
 * set; everything started is closed after the test (`stops`).
 */
export async function startAttestedBroker(
  stops: (() => Promise<void>)[],
  setup: AttestedSetup,
  deps: Omit<BrokerDeps, 'logStream' | 'now'> = {},
): Promise<{ broker: TestBroker; issuer: TestIssuer; clock: TestClock }> {
  const { issuer, config } = await startAttestation(stops, setup);
  const clock = new TestClock();
  const broker = injectedBroker(config, { ...deps, now: clock.now });
  stops.push(() => broker.close());
  await waitUntil(() => broker.logs.text().includes('attestation keys fetched'), 'the first attestation keys fetched', 5000);
  return { broker, issuer, clock };
}

/** A token request for `application` (default `APP`) with `token` as its App Check header (none when undefined). */
export function askWithAttestation(broker: TestBroker, token: string | undefined, application = APP): Promise<Response> {
  return broker.fetch(
    `/api/gatekeeper-token?application_package=${application}`,
    token === undefined ? {} : { headers: { [APP_CHECK_HEADER]: token } },
  );
}
