/**
 * The false-hold rate: the sandbox's honest data (its weekly rhythm and day noise) judged day by day as an import
 * judges it, from the first day on (no history, then the fallback while fewer than 4 same weekdays are complete, then
 * the weekdays), at three chain sizes: a year at 2 and 20 stores, a quarter at 200 (the year is `npm run bench`'s,
 * bench/store-rule.mjs). No honest day may be held; the last day, with one store gone dark, must be, and so must
 * every fault the backtest injects.
 */
import { describe, expect, it } from 'vitest';
import { backtestSandbox } from '../../src/backtest/sandbox-days.js';
import { FAULT_NAMES } from '../../src/backtest/faults.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import { addDays } from '../../src/window/days.js';

const FROM = '2025-06-01';

// A year replayed night by night: seconds alone, more on a busy shared machine.
describe('honest sandbox days judged as an import judges them', { timeout: 120_000 }, () => {
  it.each([
    { stores: 2, zones: 8, days: 365 },
    { stores: 20, zones: 8, days: 365 },
    { stores: 200, zones: 4, days: 91 },
  ])(
    '$days days at $stores stores: no honest day is held; every dark store injected is, and a store gone dark on the last',
    async ({ stores, zones, days }) => {
      const last = addDays(FROM, days - 1);
      const metrics = await backtestSandbox({
        stores,
        zones,
        seed: 20_261_128,
        from: FROM,
        days,
        distortion: (store, day) => (day === last && store === 'S002' ? 0 : undefined),
        fault: 'dark',
      });
      expect(metrics.map(({ metric }) => metric)).toEqual(['unique-users', 'avg-screen-time', 'traffic']);
      for (const { metric, held, injected, caught } of metrics) {
        expect(injected.length).toBe(Math.floor((days - 1 - 28) / 11) + 1);
        expect({ metric, caught }).toEqual({ metric, caught: injected.map((fault) => ({ ...fault, nightsLate: 0 })) });
        const honest = held.filter((day) => !day.injected).map(({ day, stores: named }) => ({ day, stores: named }));
        expect({ metric, honest }).toEqual({ metric, honest: [{ day: last, stores: ['S002'] }] });
      }
    },
  );

  it('a store closed every Sunday over ten weeks: at most its first two Sundays held, none after, none still held', async () => {
    const sunday = (day: string) => new Date(`${day}T00:00:00Z`).getUTCDay() === 0;
    const [metric] = await backtestSandbox({
      stores: 20,
      zones: 4,
      seed: 11,
      from: FROM,
      days: 70,
      metrics: [METRICS['unique-users']],
      distortion: (store, day) => (store === 'S003' && sunday(day) ? 0 : undefined),
    });
    const sundays = metric!.days.filter(sunday);
    expect(sundays).toHaveLength(10);
    expect(metric!.held.length).toBeLessThanOrEqual(2);
    for (const { day, stores } of metric!.held) {
      expect(sundays.slice(0, 2)).toContain(day);
      expect(stores).toEqual(['S003']);
    }
    expect(metric!.stillHeld).toEqual([]);
  });

  it.each(FAULT_NAMES)('a quarter at 20 stores with %s injected: every fault held the night it came', async (fault) => {
    const metrics = await backtestSandbox({ stores: 20, zones: 4, seed: 7, from: FROM, days: 91, fault });
    for (const { metric, held, injected, caught } of metrics) {
      expect(injected).toHaveLength(6);
      expect({ metric, caught: caught.length }).toEqual({ metric, caught: injected.length });
      expect(held.every((day) => day.injected)).toBe(true);
    }
  });
});
