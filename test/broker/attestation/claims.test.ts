import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANDROID_APP_ID,
  IOS_APP_ID,
  appCheckClaims,
  askWithAttestation,
  issuerKey,
  signToken,
  startAttestedBroker,
  type IssuerKey,
  APP,
} from '../attestation-issuer.js';
import { type TestBroker, useCleanups } from '../broker-harness.js';

// The claims a genuine token must carry beyond its signature: a `sub` naming the application, a lifetime of at most
// 7 days, the right issuer as well as the right audience; and a remembered token answers for its own application
// only, on the fast path too. Each test here fails if its rule is removed.
const IOS_APP = 'com.acme.ShopApp';
const SECRET = 'claims-test-secret-51c0';
const DAY_SECONDS = 24 * 60 * 60;

const stops = useCleanups();

let key: IssuerKey;
beforeAll(async () => {
  key = await issuerKey('claims-key');
});

const started = () =>
  startAttestedBroker(stops, {
    keys: [key],
    clientId: 'claims-client',
    secret: SECRET,
    more: { [IOS_APP]: { platform: 'ios', appId: IOS_APP_ID } },
  });

async function ask(broker: TestBroker, token: string, application = APP): Promise<{ status: number; type: unknown }> {
  const response = await askWithAttestation(broker, token, application);
  const body = (await response.json()) as { type?: unknown };
  return { status: response.status, type: body.type };
}

/** The `refusal` of the broker's last `request completed` line. */
function lastRefusal(broker: TestBroker): unknown {
  return broker.logs
    .entries()
    .filter((entry) => entry.msg === 'request completed')
    .at(-1)?.refusal;
}

const INVALID = 'urn:area-metrics:broker:problem:attestation-invalid';

describe('attestation claims', () => {
  it("refuses a token without sub as not genuine (401), not as another application's", async () => {
    const { broker, clock } = await started();
    const claims = appCheckClaims(ANDROID_APP_ID, clock.now());
    delete claims.sub;
    expect(await ask(broker, await signToken(key, claims))).toEqual({ status: 401, type: INVALID });
    expect(lastRefusal(broker)).toBe('no subject');
  });

  it('refuses a token living longer than 7 days, and accepts one living exactly 7', async () => {
    const { broker, clock } = await started();
    const claims = appCheckClaims(ANDROID_APP_ID, clock.now());
    const iat = claims.iat as number;
    expect(await ask(broker, await signToken(key, { ...claims, exp: iat + 10 * 365 * DAY_SECONDS }))).toEqual({
      status: 401,
      type: INVALID,
    });
    expect(lastRefusal(broker)).toBe('lifetime');
    expect(await ask(broker, await signToken(key, { ...claims, exp: iat + 7 * DAY_SECONDS + 1 }))).toEqual({ status: 401, type: INVALID });
    expect((await ask(broker, await signToken(key, { ...claims, exp: iat + 7 * DAY_SECONDS }))).status).toBe(200);
  });

  it('refuses a token of the right audience from another issuer (401)', async () => {
    const { broker, clock } = await started();
    const claims = { ...appCheckClaims(ANDROID_APP_ID, clock.now()), iss: 'https://firebaseappcheck.googleapis.com/987654321' };
    expect(await ask(broker, await signToken(key, claims))).toEqual({ status: 401, type: INVALID });
    expect(lastRefusal(broker)).toBe('issuer');
  });

  it('refuses on the fast path a remembered token of one application sent for another whose token is cached (403)', async () => {
    const { broker, clock } = await started();
    const android = await signToken(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    const ios = await signToken(key, appCheckClaims(IOS_APP_ID, clock.now()));
    expect((await ask(broker, android)).status).toBe(200); // remembered as genuine, for the android app
    expect((await ask(broker, ios, IOS_APP)).status).toBe(200); // the iOS app's token is now cached: the fast path's case
    expect((await ask(broker, ios, IOS_APP)).status).toBe(200);
    expect(await ask(broker, android, IOS_APP)).toEqual({ status: 403, type: 'urn:area-metrics:broker:problem:attestation-other-app' });
  });
});
