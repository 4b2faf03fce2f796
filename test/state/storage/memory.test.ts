import { describe, expect, it } from 'vitest';
import { ImportState } from '../../../src/state/import-state.js';
import { MemoryStateStorage } from '../../../src/state/storage/memory.js';

describe('MemoryStateStorage', () => {
  it('keeps what a state writes for the next read, and leaves it as it is when a change returns nothing', async () => {
    const storage = new MemoryStateStorage();
    expect(await storage.read()).toBeUndefined();
    const state = await ImportState.load(storage, { now: new Date('2026-11-28T12:00:00Z'), metricNames: ['traffic'] });
    await state.markComplete('traffic', '2026-11-20', ['S001']);
    const written = await storage.read();
    const again = await ImportState.load(storage, { now: new Date('2026-11-28T12:00:00Z'), metricNames: ['traffic'] });
    expect(again.isFinal('traffic', '2026-11-20')).toBe(true);
    await storage.update(() => undefined);
    expect(await storage.read()).toBe(written);
  });
});
