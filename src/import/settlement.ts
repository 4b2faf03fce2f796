import type { Destination } from '../destination/destination.js';
import { extensionOf } from '../output/format.js';
import { UnitPaths } from '../output/layout.js';
import { MANIFEST_VERSION, newRunId, saveManifest, type ManifestUnit, type RunManifest } from '../output/run-manifest.js';
import type { ImportState } from '../state/import-state.js';
import type { CalendarDay } from '../window/days.js';
import { VERSION } from '../version.js';
import type { WallClock } from '../window/wall-clock.js';
import { DayFinality } from './finality.js';

/** A person's word on days (`accept`, `reopen`), as the manifests tell it. */
export interface Settlement {
  /** The command as given, e.g. `accept traffic --date 2026-11-05`. */
  readonly command: string;
  readonly metrics: readonly string[];
  readonly days: readonly CalendarDay[];
}

/**
 * Writes a manifest for days a person settled, beside the runs' manifests, so a loader that reads only manifests
 * learns of it: an accepted day is `final` and `finalized` (its file, if any, unchanged), a reopened one
 * `provisional`. Nothing is fetched; the files are as the last import left them. A stream keeps no manifests.
 */
export async function recordSettlement(
  destination: Destination,
  state: ImportState,
  settlement: Settlement,
  apply: () => Promise<void>,
  clock: WallClock,
): Promise<string | undefined> {
  const units = settlement.metrics.flatMap((metric) => settlement.days.map((day) => ({ metric: { name: metric }, day })));
  const finality = new DayFinality(state, [], units);
  await apply();
  const shelf = await destination.manifests();
  if (shelf === undefined) return undefined;
  const format = state.format ?? 'csv';
  const paths = new UnitPaths(extensionOf({ format, shape: 'rows' }), state.layout);
  const manifestUnits: ManifestUnit[] = [];
  for (const unit of units) {
    const file = await destination.storedFile(paths.dataOf(unit));
    manifestUnits.push({
      metric: unit.metric.name,
      day: unit.day,
      store: null,
      path: file?.path ?? null,
      rows: null,
      bytes: file?.bytes ?? null,
      sha256: file?.sha256 ?? null,
      changed: false,
      ...finality.standing(unit.metric.name, unit.day),
    });
  }
  // The command's clock, as every run's manifest has it: manifests sort by it.
  const at = clock();
  const time = at.toISOString();
  const manifest: RunManifest = {
    manifestVersion: MANIFEST_VERSION,
    runId: newRunId(at.getTime()),
    tool: 'area-metrics',
    version: VERSION,
    command: settlement.command,
    start: time,
    end: time,
    exitCode: 0,
    requests: null,
    throttled: null,
    layout: state.layout,
    format,
    days: state.dayMode,
    units: manifestUnits,
  };
  return (await saveManifest(shelf, manifest)).location;
}
