import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManifestUnit, RunManifest } from '../../src/output/run-manifest.js';

/** The newest run manifest of an output folder (run ids sort by start time). */
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
