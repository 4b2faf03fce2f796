import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManifestFolder, ManifestUnit, RunManifest } from '../../src/output/run-manifest.js';
import { ROOT } from './cli.js';
import { codeBlocks } from './markdown.js';

/** The newest run manifest of an output folder (names sort in the order the manifests appeared). */
export async function latestManifest(out: string): Promise<RunManifest> {
  const names = (await readdir(join(out, '_runs'))).filter((name) => name.endsWith('.json')).sort();
  const name = names.at(-1);
  if (name === undefined) throw new Error(`no manifest under ${out}/_runs`);
  return JSON.parse(await readFile(join(out, '_runs', name), 'utf8')) as RunManifest;
}

/** The newest manifest's unit of a metric and day. */
export async function latestUnit(out: string, metric: string, day: string): Promise<ManifestUnit | undefined> {
  return (await latestManifest(out)).units.find((unit) => unit.metric === metric && unit.day === day);
}

/** One unit a loader loads: final, and changed or finalized, as the manifest it was read from says. */
export interface LoadedUnit {
  readonly metric: string;
  readonly day: string;
  readonly store: string | null;
  readonly path: string | null;
  readonly sha256: string | null;
  /** The manifest it came from: its name, or its `seq` in PostgreSQL. */
  readonly from: string;
}

/** A unit to load, as a manifest names it. */
export type UnitToLoad = Omit<LoadedUnit, 'from'>;

/** Where a loader finds the manifests it has not read: those after `mark`, in the order to read them. */
export interface ManifestSource {
  /** The manifests after `mark`, oldest first: what the loader keeps as its next mark for each, and its units to load. */
  after(mark: string): Promise<{ readonly mark: string; readonly units: readonly UnitToLoad[] }[]>;
  /** A loader that has read nothing yet starts from this mark. */
  readonly start: string;
}

/** The units of a manifest a loader takes: final, and either new bytes or a day made final by that run. */
export function unitsToLoad(manifest: Pick<RunManifest, 'units'>): UnitToLoad[] {
  return manifest.units
    .filter((unit) => unit.status === 'final' && (unit.changed || unit.finalized === true))
    .map(({ metric, day, store, path, sha256 }) => ({ metric, day, store, path, sha256 }));
}

/**
 * The loader of docs/import.md ("Run manifests"), run between and during runs: it remembers the last manifest it
 * read, reads every one after it in order, and loads the final units that changed or became final.
 */
export class ManifestLoader {
  private mark: string;
  /** Every manifest read, in the order read (its mark). */
  readonly read: string[] = [];
  readonly loaded: LoadedUnit[] = [];

  constructor(private readonly source: ManifestSource) {
    this.mark = source.start;
  }

  async poll(): Promise<void> {
    for (const { mark, units } of await this.source.after(this.mark)) {
      for (const unit of units) this.loaded.push({ ...unit, from: mark });
      this.read.push(mark);
      this.mark = mark;
    }
  }
}

/** The names after `mark` in byte order (`LC_ALL=C sort`), as the docs' loop lists `_runs/*.json`. */
function namesAfter(names: readonly string[], mark: string): string[] {
  return names.filter((name) => name.endsWith('.json') && name > mark).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** A folder's `_runs/`: the names after the last one read. */
export function folderManifests(out: string): ManifestSource {
  const runs = join(out, '_runs');
  return {
    start: '0',
    after: async (mark) =>
      Promise.all(
        namesAfter(await readdir(runs).catch(() => []), mark).map(async (name) => ({
          mark: name,
          units: unitsToLoad(JSON.parse(await readFile(join(runs, name), 'utf8')) as RunManifest),
        })),
      ),
  };
}

/** Keys and their bytes under a folder-like prefix (a bucket's `<prefix>/_runs`), keys relative to it. */
export type ObjectLister = () => Promise<ReadonlyMap<string, Buffer>>;

/** A bucket prefix's `_runs/`: listed, the keys after the last one read. */
export function bucketManifests(list: ObjectLister): ManifestSource {
  return {
    start: '0',
    after: async (mark) => {
      const objects = await list();
      return namesAfter([...objects.keys()], mark).map((name) => ({
        mark: name,
        units: unitsToLoad(JSON.parse(objects.get(name)!.toString('utf8')) as RunManifest),
      }));
    },
  };
}

/** Runs one statement with its parameters: a PostgreSQL client's `query`, rows out. */
export type RowQuery = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * PostgreSQL's runs table through the loader query of docs/import.md itself (its schema named, `:last_seen` bound):
 * the rows after the highest `seq` the query returned last time.
 */
export async function databaseManifests(query: RowQuery, schema: string): Promise<ManifestSource> {
  const blocks = codeBlocks(await readFile(join(ROOT, 'docs/import.md'), 'utf8'));
  const sql = blocks.find((block) => block.includes('area_metrics_runs') && block.includes(':last_seen'));
  if (sql === undefined) throw new Error('docs/import.md has no loader query over area_metrics_runs with :last_seen');
  const statement = sql
    .replaceAll('area_metrics.area_metrics_runs', `${schema}.area_metrics_runs`)
    .replaceAll(':last_seen', '$1')
    .replace(/;\s*$/, '');
  return {
    start: '0',
    after: async (mark) => {
      const bySeq = new Map<string, UnitToLoad[]>();
      for (const row of await query(statement, [mark])) {
        const seq = String(row.seq);
        // pg reads a date as local midnight.
        const day =
          row.day instanceof Date
            ? `${row.day.getFullYear()}-${String(row.day.getMonth() + 1).padStart(2, '0')}-${String(row.day.getDate()).padStart(2, '0')}`
            : String(row.day);
        const units = bySeq.get(seq) ?? [];
        units.push({
          metric: String(row.metric),
          day,
          store: (row.store as string | null) ?? null,
          path: null,
          sha256: (row.sha256 as string | null) ?? null,
        });
        bySeq.set(seq, units);
      }
      return [...bySeq].map(([seq, units]) => ({ mark: seq, units }));
    },
  };
}

/**
 * The `jq` loop of docs/import.md itself, run by bash in `cwd` (where it keeps `loaded-through`) over the folder
 * `out`, with `load` writing each path it is given to `loads.txt`: the paths it loaded so far, in order. Undefined
 * where bash or jq is missing.
 */
export async function runDocsShellLoader(out: string, cwd: string): Promise<string[] | undefined> {
  const hasTools = ['bash', 'jq'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
  if (!hasTools) return undefined;
  const blocks = codeBlocks(await readFile(join(ROOT, 'docs/import.md'), 'utf8'));
  const loop = blocks.find((block) => block.includes('loaded-through') && block.includes('jq'));
  if (loop === undefined) throw new Error('docs/import.md has no jq loader loop');
  const script = `load() { printf '%s\\n' "$1" >> loads.txt; }\n${loop.replaceAll('area-metrics-data', out)}`;
  const result = spawnSync('bash', ['-c', script], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the docs' loader loop failed (${result.status}): ${result.stderr}`);
  const loads = await readFile(join(cwd, 'loads.txt'), 'utf8').catch(() => '');
  return loads.split('\n').filter(Boolean);
}

/** What a manifest says of a unit that wrote no file (failed, not attempted, settled without data). */
export const UNIT_WITHOUT_FILE = { store: null, path: null, rows: null, bytes: null, sha256: null, changed: false } as const;

/**
 * A race of `writers` manifest writers that all list before any creates, so that every one aims at the same number:
 * wrap each writer's folder with the function returned, whose listing waits until every writer has listed.
 */
export function listingTogether(writers: number): (folder: ManifestFolder) => ManifestFolder {
  let listed = 0;
  let release!: () => void;
  const allListed = new Promise<void>((resolve) => (release = resolve));
  return (folder) => ({
    locationOf: (name) => folder.locationOf(name),
    create: (name, text) => folder.create(name, text),
    remove: (name) => folder.remove(name),
    names: async () => {
      const names = await folder.names();
      if (++listed === writers) release();
      await allListed;
      return names;
    },
  });
}
