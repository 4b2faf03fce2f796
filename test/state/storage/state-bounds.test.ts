import { constants, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { METRIC_NAMES } from '../../../src/metrics/names.js';
import { ImportState } from '../../../src/state/import-state.js';
import { STORE_RULE } from '../../../src/state/judgement/store-rule.js';
import type { StateStorage } from '../../../src/state/storage/storage.js';
import { STATE_BOUNDS } from '../../../src/state/storage/state-bounds.js';
import { parseState } from '../../../src/state/storage/state-file.js';
import { decodeStoreSet, encodeStoreSet } from '../../../src/state/storage/store-sets.js';
import { addDays } from '../../../src/window/days.js';

const OPTIONS = { now: new Date('2026-11-21T02:30:00Z'), metricNames: METRIC_NAMES };
const CODES = Array.from({ length: 12 }, (_, index) => `S${String(index + 1).padStart(3, '0')}`);

/** Base64 of raw deflate that inflates to `mebibytes` MiB of one byte: blocks of 1 MiB, each standing alone. */
function deflateBomb(mebibytes: number): string {
  const block = deflateRawSync(Buffer.alloc(1024 * 1024, 'a'), { finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array.from({ length: mebibytes }, () => block), deflateRawSync(Buffer.alloc(0))]).toString('base64');
}

/** `read` refuses the state as damaged: a usage error (exit 2) saying what. */
function expectDamaged(read: () => unknown, what: RegExp): void {
  expect(read).toThrow(UsageError);
  expect(read).toThrow(what);
}

describe('decoding a store set no further than the stores the state says it has', () => {
  it('reads a set of as many stores as the state records', () => {
    expect(decodeStoreSet(encodeStoreSet(CODES), 'state.json', 'id', CODES.length)).toEqual(CODES);
  });

  it('a deflate bomb is damaged, found out at the cost of the stores it may hold', () => {
    const bomb = deflateBomb(256);
    const started = process.cpuUsage();
    expectDamaged(() => decodeStoreSet(bomb, 'state.json', 'b0mb', 12), /store set "b0mb" is damaged/);
    // Inflating the 64 MiB a store set may hold at most takes 75 ms of CPU or more (the check reads it twice); stopping
    // at 12 stores' bytes, under one. CPU time, which a busy machine's other processes do not add to.
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(30);
  });

  it('more codes than the state says the set has is damaged', () => {
    expectDamaged(() => decodeStoreSet(encodeStoreSet(CODES), 'state.json', 'id', CODES.length - 1), /is damaged/);
  });

  it('a set with no count recorded is still bounded', () => {
    expectDamaged(() => decodeStoreSet(deflateBomb(STATE_BOUNDS.storeSetBytes / 1024 / 1024 + 1), 'state.json', 'id'), /is damaged/);
  });
});

describe('one bounded reader wherever the state is kept', () => {
  it('a bomb in the text a storage returns (a bucket object, a PostgreSQL row, a file) is damaged when its stores are asked for', async () => {
    const text = JSON.stringify({
      version: 5,
      metrics: { traffic: { complete: [['2026-11-18', '2026-11-18']], stores: 12, storeSet: 'b0mb' } },
      storeSets: { b0mb: deflateBomb(256) },
    });
    const kept: StateStorage = { location: 's3://bucket/state.json', read: () => Promise.resolve(text), update: () => Promise.resolve() };
    const state = await ImportState.load(kept, OPTIONS);
    expectDamaged(() => state.storeCodes('traffic'), /s3:\/\/bucket\/state\.json: store set "b0mb" is damaged/);
  });
});

describe("a state's text and lists, bounded by what a state keeps", () => {
  it('a text larger than any state is damaged before it is parsed', () => {
    const text = `{"version":5,"metrics":{},"storeSets":{}}${' '.repeat(STATE_BOUNDS.textBytes)}`;
    expectDamaged(() => parseState(text, 'state.json', OPTIONS), /state\.json is damaged: \d+ bytes, more than a state holds/);
  });

  const withFigures = (count: number): string => {
    const days = Array.from({ length: count }, (_, index) => addDays('2026-11-20', -index));
    const storeFigures = Object.fromEntries(days.map((day) => [day, ['id', 'AAAA']]));
    return JSON.stringify({ version: 5, metrics: { traffic: { storeFigures } }, storeSets: { id: encodeStoreSet(['S001', 'S002']) } });
  };

  it('as many days of store figures as a state keeps are read, one more is damaged', () => {
    const most = STATE_BOUNDS.figureDays;
    expect(() => parseState(withFigures(most), 'state.json', OPTIONS)).not.toThrow();
    expectDamaged(
      () => parseState(withFigures(most + 1), 'state.json', OPTIONS),
      new RegExp(`traffic storeFigures is damaged: ${most + 1} entries, more than a state keeps \\(${most}\\)`),
    );
  });

  it('the figures a state keeps are the days the per-store rule judges by, and more', () => {
    expect(STATE_BOUNDS.figureDays).toBeGreaterThanOrEqual(STORE_RULE.weeks * 7);
  });
});
