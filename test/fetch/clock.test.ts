import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { systemClock, unlessAborted } from '../../src/fetch/clock.js';

describe('systemClock.sleep', () => {
  it('waits about as long as asked', async () => {
    const started = performance.now();
    await systemClock.sleep(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('gives a signal one abort listener however many wait on it, and wakes them all with its reason', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      // 64 units in their backoff at once, and 64 more waiting for their turn at the pacer.
      const sleeping = Array.from({ length: 64 }, () => systemClock.sleep(60_000, controller.signal));
      const waiting = Array.from({ length: 64 }, () => unlessAborted(new Promise<void>(() => {}), controller.signal));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      const reason = new Error('interrupted');
      controller.abort(reason);
      const outcomes = await Promise.allSettled([...sleeping, ...waiting]);
      expect(outcomes.every((outcome) => outcome.status === 'rejected' && outcome.reason === reason)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects at once when the signal has already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(systemClock.sleep(60_000, controller.signal)).rejects.toThrow('already');
    await expect(unlessAborted(new Promise(() => {}), controller.signal)).rejects.toThrow('already');
  });
});
