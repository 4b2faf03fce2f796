import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errnoCode } from '../errors.js';
import { writeFileAtomic } from '../output/atomic-file.js';
import { COVERAGE_FILE, COVERAGE_FOLDER, coverageParquet, manifestLoads, unitLoadKey, type UnitLoad } from '../output/coverage-file.js';
import type { ObjectStore } from '../output/object-store.js';
import { RUNS_FOLDER, type RunManifest } from '../output/run-manifest.js';
import { coverageDaysOfText, withLoads, type CoverageDay, type DayLoad } from '../state/coverage-rows.js';
import type { StateStorage } from '../state/storage/storage.js';
import { VERSION } from '../version.js';

/** Where the coverage table is written, and the run manifests its rows and load times come from. */
export interface CoverageShelf {
  /** The manifests' names (none when there is no folder of them). */
  manifestNames(): Promise<string[]>;
  readManifest(name: string): Promise<string | undefined>;
  /** Replaces the table at once: a reader sees the old file or the new one. */
  write(bytes: Uint8Array): Promise<void>;
}

const MANIFEST_FILE = /\.json$/;
/** Tables made for one state write, each from the state as read after the one before. */
const MAX_TABLE_ROUNDS = 4;

/**
 * A state storage that rewrites `_coverage/coverage.parquet` beside the state after each write that changes it (an
 * import's days, `accept`, `reopen`): the state's days with their status, and each day's rows and load time from the
 * run manifests. A manifest never changes once written, so each is read once a process. Runs writing one state at
 * once leave the table of the last state (see `update`).
 */
export class CoverageWritingStorage implements StateStorage {
  private readonly manifests = new Map<string, RunManifest | undefined>();

  constructor(
    private readonly inner: StateStorage,
    private readonly shelf: CoverageShelf,
  ) {}

  get location(): string {
    return this.inner.location;
  }

  get absence(): string | undefined {
    return this.inner.absence;
  }

  read(): Promise<string | undefined> {
    return this.inner.read();
  }

  async update(change: (current: string | undefined) => string | undefined): Promise<void> {
    let written: string | undefined;
    await this.inner.update((current) => (written = change(current)));
    // Another run may write the state between this write and this table, and its table land first: the state is read
    // again after each table, which is made again until the two agree. So the last table written is always of a state
    // read after it, the last one. (A few rounds at most: a run that keeps losing leaves the repair to the next write.)
    for (let text = written, round = 0; text !== undefined && round < MAX_TABLE_ROUNDS; round++) {
      await this.rewrite(text);
      const now = await this.inner.read();
      if (now === text) return;
      text = now;
    }
  }

  /** The table of the state `text`, loads as the manifests tell them. */
  private async rewrite(text: string): Promise<void> {
    const loads = manifestLoads(await this.readManifests());
    const rows = withLoads(coverageDaysOfText(text), (day) => dayLoad(loads, day));
    await this.shelf.write(await coverageParquet(rows, `area-metrics ${VERSION}`));
  }

  private async readManifests(): Promise<RunManifest[]> {
    const names = (await this.shelf.manifestNames()).filter((name) => MANIFEST_FILE.test(name));
    for (const name of names) {
      if (this.manifests.has(name)) continue;
      // One that cannot be read (half-written by an old release, hand-edited) tells nothing.
      const body = await this.shelf.readManifest(name);
      this.manifests.set(name, body === undefined ? undefined : parsedManifest(body));
    }
    const current = new Set(names);
    return [...this.manifests].filter(([name, manifest]) => current.has(name) && manifest !== undefined).map(([, manifest]) => manifest!);
  }
}

function parsedManifest(body: string): RunManifest | undefined {
  try {
    const manifest = JSON.parse(body) as RunManifest;
    return Array.isArray(manifest.units) ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/** A day's load: its whole-metric unit, or the sum of a `--store` key's stores' units and the latest of their times. */
function dayLoad(loads: ReadonlyMap<string, UnitLoad>, day: CoverageDay): DayLoad | undefined {
  const units = (day.stores === null ? [''] : day.stores.split(','))
    .map((store) => loads.get(unitLoadKey(day.metric, day.day, store)))
    .filter((load) => load !== undefined);
  if (units.length === 0) return undefined;
  return {
    rows: units.reduce((sum, load) => sum + load.rows, 0),
    loadedAt: new Date(Math.max(...units.map((load) => load.loadedAt.getTime()))),
  };
}

/** The manifests of a folder's `_runs/` (none before the first run's). */
export function folderManifests(outputDir: string): Pick<CoverageShelf, 'manifestNames' | 'readManifest'> {
  const runs = join(outputDir, RUNS_FOLDER);
  return {
    manifestNames: () =>
      readdir(runs).catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT') return [];
        throw error;
      }),
    readManifest: (name) => readFile(join(runs, name), 'utf8').catch(() => undefined),
  };
}

/** The manifests under a bucket prefix's `_runs/` (`runs` is that folder's key, ending in `/`). */
export function bucketManifests(store: ObjectStore, runs: string): Pick<CoverageShelf, 'manifestNames' | 'readManifest'> {
  return {
    manifestNames: async () => (await store.listKeys(runs)).map((key) => key.slice(runs.length)).filter((name) => !name.includes('/')),
    readManifest: async (name) => (await store.read(`${runs}${name}`))?.body.toString('utf8'),
  };
}

/** The table in `<state file's folder>/_coverage/`. */
export function folderCoverageWriter(stateFile: string): CoverageShelf['write'] {
  return (bytes) => writeFileAtomic(join(dirname(stateFile), COVERAGE_FOLDER, COVERAGE_FILE), [bytes]);
}

/** The table under the state object's prefix, `<prefix>/_coverage/`. */
export function bucketCoverageWriter(store: ObjectStore, stateKey: string): CoverageShelf['write'] {
  const folder = stateKey.slice(0, stateKey.lastIndexOf('/') + 1);
  return async (bytes) => {
    await store.writeIfChanged(`${folder}${COVERAGE_FOLDER}/${COVERAGE_FILE}`, bytes);
  };
}
