import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planDays } from '../../src/import/plan.js';
import { STATE_FILE_NAME } from '../../src/destination/spec.js';
import { addDays } from '../../src/window/days.js';
import { loadStateFile } from '../helpers/state-file.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('plan-');
const NOW = new Date('2026-12-31T12:00:00Z');

describe('planDays: held suspect days in a nightly --catch-up', () => {
  it('40 held days never keep a not-over day from being fetched again, and are not a --max-days cut', async () => {
    const state = await loadStateFile(join(await tempDir(), STATE_FILE_NAME), { now: NOW, metricNames: ['traffic'] });
    await state.markComplete('traffic', '2026-10-31', ['S001']);
    const held = Array.from({ length: 40 }, (_, index) => addDays('2026-11-01', index));
    for (const day of held) await state.markPending('traffic', day, { reason: 'suspect', measure: 'm', value: 0, allZero: true });
    await state.markComplete('traffic', '2026-12-29', ['S001']);
    await state.markPending('traffic', '2026-12-30', { reason: 'not-over', stores: 1 });
    const request = { days: { kind: 'catch-up', maxDays: 31, lookback: 0 }, dayMode: 'utc', storeCodes: [] } as const;
    const { plan, cuts } = planDays(['traffic'], request, state, NOW);
    expect(plan[0]!.days).toContain('2026-12-30');
    expect(plan[0]!.days.filter((day) => held.includes(day))).toHaveLength(7);
    expect(cuts).toEqual([]);
  });
});
