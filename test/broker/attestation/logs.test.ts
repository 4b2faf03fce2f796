import { createServer } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BrokerConfig } from '../../../src/broker/config/config.js';
import { startBroker } from '../../../src/broker/http/server.js';
import { waitUntil } from '../../helpers/cli.js';
import { listenOnLoopback } from '../../helpers/loopback.js';
import {
  ANDROID_APP_ID,
  IOS_APP_ID,
  appCheckClaims,
  askWithAttestation,
  issuerKey,
  signToken,
  startAttestedBroker,
  startIssuer,
  withKid,
  type IssuerKey,
  enforcedConfig,
} from '../attestation-issuer.js';
import { LogCapture, injectedBroker, useCleanups } from '../broker-harness.js';

// What an operator reads at the default level during an App Check rollout: each refusal cause with its reason the
// first time in an interval, a count per cause after that; the attestation mode at start; why the keys failed.
const SECRET = 'logs-test-secret-c4e8';
const CLIENT = { clientId: 'logs-client', secret: SECRET, singleUse: true };

const stops = useCleanups();

let key: IssuerKey;
let stranger: IssuerKey;
beforeAll(async () => {
  [key, stranger] = await Promise.all([issuerKey('logs-key'), issuerKey('logs-stranger')]);
});

function configOf(authUrl: string, jwksUrl: string): BrokerConfig {
  return enforcedConfig({ authUrl, jwksUrl, ...CLIENT });
}

async function untilLogged(logs: LogCapture, text: string): Promise<void> {
  await waitUntil(() => logs.text().includes(text), `the log line: ${text}`, 5000);
}

describe('attestation refusals in the log', () => {
  it('gives each cause its own line with its reason once per interval, and a count per cause after that', async () => {
    const { broker, clock } = await startAttestedBroker(stops, { keys: [key], ...CLIENT }, { hitSummaryIntervalMs: 3_600_000 });
    const claims = (): ReturnType<typeof appCheckClaims> => appCheckClaims(ANDROID_APP_ID, clock.now());
    const replayed = await signToken(key, claims());
    const expected: Record<string, () => Promise<string | undefined>> = {
      missing: async () => undefined,
      expired: async () =>
        signToken(key, { ...claims(), iat: Math.floor(clock.now() / 1000) - 7200, exp: Math.floor(clock.now() / 1000) - 120 }),
      audience: async () => signToken(key, { ...claims(), aud: ['projects/987654321'] }),
      issuer: async () => signToken(key, { ...claims(), iss: 'https://firebaseappcheck.googleapis.com/987654321' }),
      signature: async () => signToken(withKid(stranger, key.kid), claims()),
      'unknown key': async () => signToken(withKid(stranger, 'not-published'), claims()),
      malformed: async () => 'not a token at all',
      'other app': async () => signToken(key, appCheckClaims(IOS_APP_ID, clock.now())),
      replayed: async () => replayed,
    };
    expect((await askWithAttestation(broker, replayed)).status).toBe(200);
    for (const round of [1, 2, 3]) {
      for (const token of Object.values(expected)) {
        const response = await askWithAttestation(broker, await token());
        expect([round, response.status >= 400]).toEqual([round, true]);
      }
    }
    const refusals = broker.logs
      .entries()
      .filter((entry) => entry.msg === 'request completed' && entry.level === 'info' && Number(entry.status) >= 400);
    expect(refusals.map((entry) => entry.refusal).sort()).toEqual(Object.keys(expected).sort());
    for (const entry of refusals)
      if (entry.refusal !== 'missing' && entry.refusal !== 'replayed') expect(String(entry.reason)).toMatch(/^attestation: /);
    expect(refusals.find((entry) => entry.refusal === 'audience')?.reason).toBe('attestation: aud claim (check_failed)');
    await broker.close();
    stops.splice(stops.length - 1, 1);
    const summary = broker.logs.entries().find((entry) => entry.msg === 'errors not logged one by one');
    expect(summary?.errors).toEqual({
      '401 attestation-missing (missing)': 2,
      '401 attestation-invalid (expired)': 2,
      '401 attestation-invalid (audience)': 2,
      '401 attestation-invalid (issuer)': 2,
      '401 attestation-invalid (signature)': 2,
      '401 attestation-invalid (unknown key)': 2,
      '401 attestation-invalid (malformed)': 2,
      '403 attestation-other-app (other app)': 2,
      '403 attestation-replayed (replayed)': 2,
    });
    for (const token of [replayed]) expect(broker.logs.text()).not.toContain(token);
  });

  it('names the attestation mode in the listening line', async () => {
    const issuer = await startIssuer([key]);
    stops.push(() => issuer.close());
    const logs = new LogCapture();
    const broker = await startBroker(configOf('http://127.0.0.1:9', issuer.jwksUrl), { port: 0, logStream: logs });
    stops.push(() => broker.close());
    expect(logs.entries().find((entry) => entry.msg === 'broker listening')).toMatchObject({
      attestation: 'enforce (firebase-app-check, single use)',
    });
  });

  it('names why the key set could not be fetched: a 10 MB answer', async () => {
    const huge = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const listening = await listenOnLoopback(
      createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(huge)),
    );
    stops.push(() => listening.close());
    const broker = injectedBroker(configOf('http://127.0.0.1:9', `${listening.url}/v1/jwks`));
    stops.push(() => broker.close());
    await untilLogged(broker.logs, 'attestation keys could not be fetched');
    const warning = broker.logs.entries().find((entry) => String(entry.msg).startsWith('attestation keys could not be fetched'));
    expect(warning?.reason).toBe('answer over 256 KB');
  });
});
