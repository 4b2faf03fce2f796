import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import { OutageGate, VendorDownError } from '../../src/fetch/outage.js';

/** Whether `admit` lets `call` through within a few turns of the event loop. */
async function admitted(gate: OutageGate, call: number): Promise<boolean> {
  let through = false;
  void gate.admit(call).then(
    () => (through = true),
    () => {},
  );
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return through;
}

describe('OutageGate', () => {
  it('lets every call through while the vendor answers', async () => {
    const gate = new OutageGate();
    const calls = [gate.join(), gate.join(), gate.join()];
    for (const call of calls) expect(await admitted(gate, call)).toBe(true);
  });

  it('lets one call probe a failing vendor while the others wait, and opens again at its first answer', async () => {
    const gate = new OutageGate();
    const [a, b] = [gate.join(), gate.join()];
    expect(gate.failed(a, 'HTTP 503')).toBeUndefined();
    expect(await admitted(gate, a)).toBe(true);
    const waiting = gate.admit(b);
    expect(await admitted(gate, b)).toBe(false);
    gate.answered();
    await waiting;
  });

  it('passes the turn when the probing call is over without an answer', async () => {
    const gate = new OutageGate();
    const [a, b] = [gate.join(), gate.join()];
    gate.failed(a, 'network error');
    gate.leave(a);
    expect(await admitted(gate, b)).toBe(true);
  });

  it('finds the vendor down when the request after a call that used its retries fails the same way', async () => {
    const gate = new OutageGate();
    const [a, b, c] = [gate.join(), gate.join(), gate.join()];
    gate.failed(a, 'network error: ECONNREFUSED');
    // A request that was already in flight fails too: not the next one, it decides nothing.
    expect(gate.failed(b, 'network error: ECONNREFUSED')).toBeUndefined();
    gate.gaveUp(a, 'traffic 2026-11-20 page 1 failed 6 attempts');
    await gate.admit(b);
    const waitingC = gate.admit(c);
    const down = gate.failed(b, 'network error: ECONNREFUSED');
    expect(down).toBeInstanceOf(VendorDownError);
    expect(down).toBeInstanceOf(UnavailableError);
    expect(down?.message).toBe(
      'the API is unreachable or failing: traffic 2026-11-20 page 1 failed 6 attempts, and the next request failed the same way (network error: ECONNREFUSED); check the URL or try again later',
    );
    // Every call still waiting, and every later one, ends with it.
    await expect(waitingC).rejects.toBe(down);
    await expect(gate.admit(gate.join())).rejects.toBe(down);
  });

  it('does not find the vendor down when an answer came between the give-up and the next failure', async () => {
    const gate = new OutageGate();
    const [a, b] = [gate.join(), gate.join()];
    gate.failed(a, 'HTTP 500');
    gate.gaveUp(a, 'one unit failed 6 attempts');
    await gate.admit(b);
    gate.answered();
    expect(gate.failed(b, 'HTTP 500')).toBeUndefined();
  });

  it('wakes a waiting call when its run is interrupted', async () => {
    const gate = new OutageGate();
    const [a, b] = [gate.join(), gate.join()];
    gate.failed(a, 'timed out');
    const controller = new AbortController();
    const waiting = gate.admit(b, controller.signal);
    const reason = new Error('interrupted');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('finds the vendor down at a second timeout in a row: a request sent after one timed out that times out too', async () => {
    const gate = new OutageGate();
    const [a, b, c] = [gate.join(), gate.join(), gate.join()];
    // Two requests in flight together time out together: one timeout, the vendor not judged yet.
    expect(gate.failed(a, 'timed out after 1 s', { sentAt: 0, at: 1000 })).toBeUndefined();
    expect(gate.failed(b, 'timed out after 1 s', { sentAt: 10, at: 1010 })).toBeUndefined();
    // An answer between two timeouts: they are not in a row.
    gate.answered();
    expect(gate.failed(a, 'timed out after 1 s', { sentAt: 1500, at: 2500 })).toBeUndefined();
    const down = gate.failed(c, 'timed out after 1 s', { sentAt: 3000, at: 4000 });
    expect(down).toBeInstanceOf(VendorDownError);
    expect(down?.message).toBe(
      'the API accepts connections but does not answer: timed out after 1 s, and the next request too (timed out after 1 s); check the URL or try again later',
    );
    await expect(gate.admit(b)).rejects.toBe(down);
  });

  it('ends every call with the error a caller found the vendor down with', async () => {
    const gate = new OutageGate();
    const error = new VendorDownError('asked to wait too long, twice');
    gate.end(error);
    await expect(gate.admit(gate.join())).rejects.toBe(error);
  });
});
