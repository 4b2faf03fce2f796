import { createHash } from 'node:crypto';

/**
 * How an output names its files: `flat`, `<metric>/<day>.<ext>`, or `hive`, `metric=<metric>/dt=<day>/...`, the
 * `key=value` folders that Hive, Spark, Athena/Glue, Trino, BigQuery external tables and DuckDB read as columns.
 */
export type Layout = 'flat' | 'hive';

export const LAYOUTS = ['flat', 'hive'] as const satisfies readonly Layout[];

/** What names a unit's file: its metric, its day (UTC or store-local) and, with `--store`, its store. */
export interface UnitPlace {
  readonly metric: { readonly name: string };
  readonly day: string;
  readonly storeCode?: string;
}

/** Where set-aside records go, under the output; the leading `_` makes every lake reader skip it. */
export const REJECTED_FOLDER = '_rejected';

/**
 * `<day>.csv`, or `<day>.store-<S>.csv` for a `--store` unit (the code URL-encoded, so it is always a file name). A
 * code too long for a file name (at most 255 bytes, temp file's extras included) is named by its SHA-256 instead:
 * `<day>.store-sha256-<hex>.csv`.
 */
export function unitFileName(unit: UnitPlace, extension: string): string {
  const { day, storeCode } = unit;
  if (storeCode === undefined) return `${day}.${extension}`;
  const encoded = encodeURIComponent(storeCode);
  const name = encoded.length <= 180 ? encoded : `sha256-${createHash('sha256').update(storeCode).digest('hex')}`;
  return `${day}.store-${name}.${extension}`;
}

/** The folder of a metric's files under the output: `traffic`, or `metric=traffic`. */
export function metricFolder(metric: string, layout: Layout): string {
  return layout === 'flat' ? metric : `metric=${metric}`;
}

/** The folder a unit's file is in, relative to the output, `/`-separated. */
export function unitFolder(unit: UnitPlace, layout: Layout): string {
  const folder = metricFolder(unit.metric.name, layout);
  return layout === 'flat' ? folder : `${folder}/dt=${unit.day}`;
}

/**
 * A unit's file, relative to the output and `/`-separated (a key under a bucket prefix as much as a path): flat
 * `traffic/2026-11-20.csv`, hive `metric=traffic/dt=2026-11-20/traffic_2026-11-20.csv`. In hive the file name
 * repeats metric and day, so a file copied out of its folder still says what it holds.
 */
export function unitPath(unit: UnitPlace, extension: string, layout: Layout): string {
  const name = unitFileName(unit, extension);
  return `${unitFolder(unit, layout)}/${layout === 'flat' ? name : `${unit.metric.name}_${name}`}`;
}

/** Where a unit's set-aside records go: its own path in the same layout under `_rejected/`, as NDJSON. */
export function rejectedPath(unit: UnitPlace, layout: Layout): string {
  return `${REJECTED_FOLDER}/${unitPath(unit, 'ndjson', layout)}`;
}

/** A sink's names for a unit, relative to its output (a folder or a bucket's prefix): its file and its set-aside records. */
export class UnitPaths {
  constructor(
    private readonly extension: string,
    private readonly layout: Layout,
  ) {}

  dataOf(unit: UnitPlace): string {
    return unitPath(unit, this.extension, this.layout);
  }

  rejectedOf(unit: UnitPlace): string {
    return rejectedPath(unit, this.layout);
  }
}

/**
 * The folders under the output where a killed run's temp files can be, relative to it: where a run writes data and
 * set-aside records. Flat: every metric's folder (a handful, whatever the days). Hive: the day folders of these
 * units, since a folder per day is too many to read every night; a killed run's days stay pending, so the run that
 * imports them again is the one that looks there.
 */
export function tempFileFolders(metrics: readonly string[], units: readonly UnitPlace[], layout: Layout): string[] {
  const folders =
    layout === 'flat' ? metrics.map((metric) => metricFolder(metric, layout)) : [...new Set(units.map((unit) => unitFolder(unit, layout)))];
  return folders.flatMap((folder) => [folder, `${REJECTED_FOLDER}/${folder}`]);
}

/**
 * The day a unit's file holds, from its path relative to the output (as `unitPath` names it), or undefined for a
 * path that is not a unit file of this metric, layout and extension (a temp file, another format's, a manifest).
 */
export function dayOfUnitPath(path: string, metric: string, extension: string, layout: Layout): string | undefined {
  const folder = `${metricFolder(metric, layout)}/`;
  if (!path.startsWith(folder)) return undefined;
  const rest = path.slice(folder.length);
  const flat = /^(\d{4}-\d{2}-\d{2})(?:\.store-[^/]+)?\.([a-z]+)$/;
  const match =
    layout === 'flat'
      ? flat.exec(rest)
      : /^dt=(\d{4}-\d{2}-\d{2})\/(.+)$/.exec(rest)?.[2]?.startsWith(`${metric}_`)
        ? hiveMatch(rest, metric, flat)
        : null;
  return match !== null && match[2] === extension ? match[1] : undefined;
}

/** A hive unit file `dt=<day>/<metric>_<day>...`, its day and extension matched as a flat name's, the folder's day the same. */
function hiveMatch(rest: string, metric: string, flat: RegExp): RegExpExecArray | null {
  const [folder, name] = rest.split('/') as [string, string];
  const match = flat.exec(name.slice(metric.length + 1));
  return match !== null && folder === `dt=${match[1]}` ? match : null;
}
