import { it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { HttpClient, DEFAULT_RETRY_POLICY } from '../../src/fetch/http-client.js';
import { Pacer } from '../../src/fetch/pacer.js';
import { basicAuthorization } from '../../src/fetch/basic-auth.js';
import { SlidingWindowThrottle } from '../../src/sandbox/throttle.js';
import { SendLog } from '../../src/fetch/send-log.js';

it('debug', async () => {
  const events: string[] = [];
  const sandbox = await startSandbox({ stores: 30, days: 5, faults: { rateLimit: { perSecond: 10, headers: 'draft' } } });
  const t0 = performance.now();
  const original = SlidingWindowThrottle.prototype.decide;
  SlidingWindowThrottle.prototype.decide = function (limit, now) { const d = original.call(this, limit, now); events.push(`${(now - t0).toFixed(0)} SERVER ${JSON.stringify(d)} ${JSON.stringify((this as any).history.map((h: number) => Math.round(h - t0)))}`); return d; };
  const add = SendLog.prototype.add;
  SendLog.prototype.add = function (at) { events.push(`${(performance.now() - t0).toFixed(0)} GRANT`); return add.call(this, at); };
  const logger = { debug: (m: string) => events.push(`${(performance.now() - t0).toFixed(0)} ${m}`), info() {}, warn: (m: string) => events.push(`${(performance.now() - t0).toFixed(0)} W ${m.slice(0, 80)}`), error() {} };
  const pacer = new Pacer({ logger });
  const client = new HttpClient({ timeoutMs: 5000, retry: DEFAULT_RETRY_POLICY, pacer, logger });
  const day = new Date(Date.now() - 3 * 86400000).toISOString().slice(0, 10);
  const headers = { authorization: basicAuthorization({ clientId: 'demo-client', clientSecret: 'demo-secret' }) };
  const one = async (i: number) => {
    const url = new URL(`${sandbox.url}/api/bi/area-metrics/traffic/?datetime_gte=${day}T00:00:00Z&datetime_lte=${day}T23:59:59Z&page_size=5&page=${(i % 6) + 1}`);
    const sent = performance.now() - t0;
    await client.send({ method: 'GET', url, headers }, (r) => {
      events.push(`${sent.toFixed(0)}->${(performance.now() - t0).toFixed(0)} #${i} ${r.status} ${r.headers.get('ratelimit')}`);
    });
  };
  let next = 0;
  await Promise.all([0, 1, 2, 3].map(async () => { while (next < 40) await one(next++); }));
  console.log(events.join('\n'));
  await sandbox.close();
}, 60000);
