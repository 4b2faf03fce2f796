import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../helpers/cli.js';
import {
  ANDROID_APP_ID,
  appCheckClaims,
  askWithAttestation,
  issuerKey,
  signToken,
  startAttestedBroker,
  withKid,
  type IssuerKey,
} from '../attestation-issuer.js';
import { sleep, type TestBroker, useCleanups } from '../broker-harness.js';

// A key-set fetch never holds up a token whose key is already held: with the issuer hanging, a token naming a kid
// not held waits for the fetch it started, and a genuine token sent meanwhile is answered at once.
const SECRET = 'keys-test-secret-3b9d';

const stops = useCleanups();

let pair: IssuerKey;
let stranger: IssuerKey;
beforeAll(async () => {
  [pair, stranger] = await Promise.all([issuerKey('held-key'), issuerKey('stranger-key')]);
});

const started = (maxAgeSeconds: number) =>
  startAttestedBroker(stops, { keys: [pair], maxAgeSeconds, clientId: 'keys-client', secret: SECRET });

/** The request's status and how long it took, in real milliseconds. */
async function timedAsk(broker: TestBroker, token: string): Promise<{ status: number; ms: number }> {
  const startedAt = performance.now();
  const response = await askWithAttestation(broker, token);
  return { status: response.status, ms: performance.now() - startedAt };
}

describe('attestation keys while the issuer hangs', () => {
  it('answers a genuine token at once while a token naming an unknown kid waits for the fetch it started', async () => {
    const { broker, issuer, clock } = await started(3600);
    clock.advance(31_000); // past the 30 s between fetches: an unknown kid may start one
    issuer.setHanging(true);
    const fetchesBefore = issuer.fetches();
    const unknownKid = signToken(withKid(stranger, 'rotated-in'), appCheckClaims(ANDROID_APP_ID, clock.now())).then((token) =>
      timedAsk(broker, token),
    );
    await waitUntil(() => issuer.fetches() > fetchesBefore, "the unknown kid's fetch to reach the issuer", 5000); // and hang there
    const genuine = await timedAsk(broker, await signToken(pair, appCheckClaims(ANDROID_APP_ID, clock.now())));
    expect(genuine.status).toBe(200);
    // It waited 4.7 s for the hanging fetch before: 3 s rules that out with room for a busy machine.
    expect(genuine.ms).toBeLessThan(3000);
    let unknownAnswered = false;
    void unknownKid.then(() => (unknownAnswered = true));
    await sleep(20); // a negative check: no answer comes while the issuer hangs
    expect(unknownAnswered).toBe(false); // still waiting for the issuer's answer
    issuer.setHanging(false);
    expect((await unknownKid).status).toBe(401);
  });

  it('keeps answering with keys past their max-age while their refresh hangs in the background', async () => {
    const { broker, issuer, clock } = await started(60);
    clock.advance(61_000);
    issuer.setHanging(true);
    const fetchesBefore = issuer.fetches();
    const first = await timedAsk(broker, await signToken(pair, appCheckClaims(ANDROID_APP_ID, clock.now())));
    expect(first.status).toBe(200);
    expect(first.ms).toBeLessThan(3000); // not the hanging refresh's 4.7 s (as above)
    await waitUntil(() => issuer.fetches() > fetchesBefore, 'the background refresh to reach the issuer', 5000);
    const second = await timedAsk(broker, await signToken(pair, appCheckClaims(ANDROID_APP_ID, clock.now())));
    expect(second.status).toBe(200);
    expect(second.ms).toBeLessThan(3000);
  });
});
