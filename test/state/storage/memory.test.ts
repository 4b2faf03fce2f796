import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ImportState } from '../../../src/state/import-state.js';
import { MemoryStateStorage } from '../../../src/state/storage/memory.js';
import { FileStateStorage } from '../../../src/state/storage/storage.js';
import { useTempDirs } from '../../helpers/tmp.js';

const tempDir = useTempDirs('memory-state-');

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

  it('a state kept as an object is the one changed in place, read as the text a file would hold', async () => {
    const storage = new MemoryStateStorage();
    const options = { now: new Date('2026-11-28T12:00:00Z'), metricNames: ['traffic'] };
    const state = await ImportState.load(storage, options);
    await state.markComplete('traffic', '2026-11-20', ['S001']);
    const files = new FileStateStorage(join(await tempDir(), 'state.json'));
    const onFile = await ImportState.load(files, options);
    await onFile.markComplete('traffic', '2026-11-20', ['S001']);
    expect(await storage.read()).toBe(await files.read());
    // Text given to it is parsed when a state changes it next, then kept as an object.
    const text = await files.read();
    await storage.update(() => text);
    await state.markComplete('traffic', '2026-11-21', ['S001', 'S002']);
    const again = await ImportState.load(storage, options);
    expect(again.isFinal('traffic', '2026-11-21')).toBe(true);
    expect(again.storeCodes('traffic')).toEqual(['S001', 'S002']);
  });
});
