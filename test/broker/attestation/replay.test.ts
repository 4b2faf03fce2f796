import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { SharedReplayGuard } from '../../../src/broker/attestation/replay.js';
import { waitUntil } from '../../helpers/cli.js';
import { startRedis, warnIfRedisMissing } from '../../helpers/redis.js';
import {
  ANDROID_APP_ID,
  appCheckClaims,
  askWithAttestation,
  issuerKey,
  signToken,
  startAttestation,
  type IssuerKey,
} from '../attestation-issuer.js';
import { TestClock, injectedBroker, untilRedisKnown, type LogCapture, type TestBroker, useCleanups } from '../broker-harness.js';

// Single use (`singleUse: true`): an instance refuses a replay it has seen itself whatever Redis does, and the ids
// it saw while Redis was down are written to Redis when it is back, so the other instances refuse them too.
const SECRET = 'single-use-test-secret-7e2a';

const stops = useCleanups();

/** A Redis client stand-in whose SET always succeeds, as a Redis that lost its data (a restart, a failover) would. */
function forgetfulRedis(): { redis: Redis; sets: () => number } {
  let sets = 0;
  const stand = {
    set: (): Promise<'OK'> => {
      sets += 1;
      return Promise.resolve('OK');
    },
  };
  return { redis: stand as unknown as Redis, sets: () => sets };
}

describe('SharedReplayGuard', () => {
  it('refuses a replay this instance saw, whatever Redis answers', async () => {
    const { redis, sets } = forgetfulRedis();
    const guard = new SharedReplayGuard({ redis, keyPrefix: 't:', redisUp: () => true, whenRedisUp: () => undefined, now: () => 0 });
    expect(await guard.firstUse('jti-1', 60_000)).toBe(true);
    expect(await guard.firstUse('jti-1', 60_000)).toBe(false);
    expect(sets()).toBe(1);
  });

  it('accepts a first use while Redis is down and writes it when Redis is back', async () => {
    const { redis, sets } = forgetfulRedis();
    let up = false;
    let backAgain: () => void = () => undefined;
    const guard = new SharedReplayGuard({
      redis,
      keyPrefix: 't:',
      redisUp: () => up,
      whenRedisUp: (listener) => (backAgain = listener),
      now: () => 0,
    });
    expect(await guard.firstUse('jti-2', 60_000)).toBe(true);
    expect(await guard.firstUse('jti-2', 60_000)).toBe(false);
    expect([sets(), guard.unwrittenCount]).toEqual([0, 1]);
    up = true;
    backAgain();
    await waitUntil(() => sets() === 1 && guard.unwrittenCount === 0, 'the unwritten use written to Redis', 5000);
    expect([sets(), guard.unwrittenCount]).toEqual([1, 0]);
  });
});

const pairs: IssuerKey[] = [];
beforeAll(async () => {
  pairs.push(await issuerKey('single-use-key'));
});

async function ask(target: TestBroker, token: string): Promise<number> {
  return (await askWithAttestation(target, token)).status;
}

/** Waits until the broker has logged Redis's state `state` `times` times in all. */
async function untilRedis(logs: LogCapture, state: 'up' | 'down', times: number): Promise<void> {
  await waitUntil(
    () => logs.lines.filter((line) => line.includes(`"redis":"${state}"`)).length >= times,
    `the broker to log Redis ${state} ${times} times`,
    10_000,
  );
}

const redisMissing = warnIfRedisMissing('the single-use tests across a Redis outage (test/broker/attestation/replay.test.ts)');
describe.skipIf(redisMissing)('single use across a Redis outage (real redis-server, killed and restarted)', () => {
  it('an instance refuses its own replays throughout; ids seen during the outage reach the other instance after it', async () => {
    const redisServer = await startRedis();
    let current = redisServer;
    stops.push(() => current.stop());
    const { config } = await startAttestation(stops, { keys: pairs, clientId: 'single-use-client', secret: SECRET, singleUse: true });
    const clock = new TestClock();
    const [first, second] = [0, 1].map(() =>
      injectedBroker(config, { now: clock.now, redisUrl: redisServer.url, redisProbeIntervalMs: 50 }),
    ) as [TestBroker, TestBroker];
    stops.push(
      () => first.close(),
      () => second.close(),
    );
    await Promise.all([untilRedisKnown(first.logs), untilRedisKnown(second.logs)]);
    const key = pairs[0] as IssuerKey;
    const mint = async (): Promise<string> => signToken(key, appCheckClaims(ANDROID_APP_ID, clock.now()));

    const usedBefore = await mint();
    expect(await ask(first, usedBefore)).toBe(200);
    expect(await ask(second, usedBefore)).toBe(403);

    await redisServer.kill();
    await Promise.all([untilRedis(first.logs, 'down', 1), untilRedis(second.logs, 'down', 1)]);
    expect(await ask(first, usedBefore)).toBe(403); // used here while Redis was up: refused from memory
    const usedDuring = await mint();
    expect(await ask(first, usedDuring)).toBe(200); // a first use is never refused for an outage
    expect(await ask(first, usedDuring)).toBe(403);

    current = await startRedis({ port: redisServer.port }); // empty: what Redis held before is gone
    await Promise.all([untilRedis(first.logs, 'up', 2), untilRedis(second.logs, 'up', 2)]);
    const inspect = new Redis(current.url, { lazyConnect: true });
    stops.push(async () => void inspect.disconnect());
    await inspect.connect();
    await waitUntil(async () => (await inspect.keys('*jti:*')).length >= 1, "the first instance to write its outage's ids to Redis", 5000);
    expect(await ask(second, usedDuring)).toBe(403); // written to Redis by the first instance when it came back
    expect(await ask(first, usedDuring)).toBe(403);
    expect(await ask(first, usedBefore)).toBe(403); // Redis lost it; the first instance's memory did not
    expect(await ask(second, await mint())).toBe(200);
  });
});
