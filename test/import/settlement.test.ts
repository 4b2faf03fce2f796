import { NO_DATABASE } from '../helpers/import-config.js';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStores } from '../../src/destination/object-stores.js';
import { openDestination } from '../../src/destination/open.js';
import { destinationSpec } from '../../src/destination/spec.js';
import { recordSettlement } from '../../src/import/settlement.js';
import { silentLogger } from '../../src/log/logger.js';
import { sha256Hex } from '../../src/output/content-hash.js';
import { loadStateFile } from '../helpers/state-file.js';
import { useTempDirs } from '../helpers/tmp.js';
import { frozenClock } from '../../src/window/wall-clock.js';
import { UNIT_WITHOUT_FILE } from '../helpers/manifests.js';

const NOW = new Date('2026-11-21T12:00:00Z');
/** The command's clock, days after NOW: what stamps the manifests. */
const SETTLED_AT = new Date('2026-11-25T08:30:00.000Z');
const clock = frozenClock(SETTLED_AT);
const tempDir = useTempDirs('settlement-');

async function folderWith(files: Record<string, string>) {
  const dir = await tempDir();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const stores = new ObjectStores({ env: {}, forcePathStyle: false, retries: 0, timeoutMs: 1000, logger: silentLogger });
  const destination = openDestination(destinationSpec(dir, '-o/--output'), { stores, stdout: process.stdout, database: NO_DATABASE });
  const state = await loadStateFile(join(dir, '.area-metrics-state.json'), { now: NOW, metricNames: ['traffic'] });
  const manifest = async () => {
    const newest = (await readdir(join(dir, '_runs'))).sort().at(-1) ?? '';
    return JSON.parse(await readFile(join(dir, '_runs', newest), 'utf8')) as {
      command: string;
      runId: string;
      start: string;
      end: string;
      units: Record<string, unknown>[];
    };
  };
  /** `accept` or `reopen` of traffic's `days` (a range: the first and the last), recorded as the command records it. */
  const settle = (verb: 'accept' | 'reopen', days: string[]) =>
    recordSettlement(
      destination,
      state,
      { command: `${verb} traffic ${days.join('..')}`, metrics: ['traffic'], days },
      () => state[verb]('traffic', days),
      clock,
    );
  return { dir, destination, state, manifest, settle };
}

describe('recordSettlement', () => {
  it('an accepted day is final and finalized in a manifest of its own, with its file as the last import left it', async () => {
    const text = 'store_code,date,day,granularity,zone,traffic_pct\nS001,2026-11-18T00:00:00Z,2026-11-18,daily,A,1.00000\n';
    const { state, manifest, settle } = await folderWith({ 'traffic/2026-11-18.csv': text });
    await state.markPending('traffic', '2026-11-18', { reason: 'suspect' });
    await settle('accept', ['2026-11-18', '2026-11-19']);
    const written = await manifest();
    expect(written.command).toBe('accept traffic 2026-11-18..2026-11-19');
    // Stamped by the command's clock: its start, end and run id (a UUIDv7's first 48 bits are milliseconds).
    expect([written.start, written.end]).toEqual([SETTLED_AT.toISOString(), SETTLED_AT.toISOString()]);
    expect(Number.parseInt(written.runId.replace('-', '').slice(0, 12), 16)).toBe(SETTLED_AT.getTime());
    expect(written.units).toEqual([
      {
        metric: 'traffic',
        day: '2026-11-18',
        store: null,
        path: 'traffic/2026-11-18.csv',
        rows: null,
        bytes: text.length,
        sha256: sha256Hex(Buffer.from(text)),
        changed: false,
        status: 'final',
        finalized: true,
      },
      {
        metric: 'traffic',
        day: '2026-11-19',
        ...UNIT_WITHOUT_FILE,
        status: 'final',
        finalized: true,
      },
    ]);
  });

  it('a reopened day is provisional again; one final before and after is not finalized again', async () => {
    const { state, manifest, settle } = await folderWith({});
    await state.markComplete('traffic', '2026-11-18', ['S001']);
    await settle('reopen', ['2026-11-18']);
    expect((await manifest()).units).toMatchObject([{ day: '2026-11-18', status: 'provisional', reason: 'reopened' }]);
    await state.markComplete('traffic', '2026-11-18', ['S001']);
    await settle('accept', ['2026-11-18']);
    expect((await manifest()).units[0]).toMatchObject({ status: 'final' });
    expect((await manifest()).units[0]).not.toHaveProperty('finalized');
  });
});
