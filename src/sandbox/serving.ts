import { Dataset, type MetricResult, type QueryRefs } from './data.js';
import { distortResult } from '../metrics/distortion.js';
import type { PublishingRules } from './publishing.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** What decides which results the vendor serves, besides the clock. */
export interface ServingRules {
  readonly publishing: PublishingRules;
  /** Changes with every change of `publishing`, so caches of the old rules are not used. */
  readonly publishingGeneration: number;
  /** Serve local days that have not ended yet, with values that change until they do. */
  readonly serveInProgress: boolean;
}

/** A query as served at one moment: its results, the seed of each result's values, and a key naming both. */
export interface ServedQuery {
  readonly refs: QueryRefs;
  readonly seedOf: (storeIndex: number, localDay: number) => number;
  /** Names the results and their values, for the page cache. */
  readonly key: string;
  /** The factor a result's values are distorted by (publishing rules), when any rule distorts. */
  readonly distortionOf?: (metric: string, storeIndex: number, localDay: number) => number | undefined;
}

/**
 * The results of a query that the vendor serves at `nowMs`. A store's local day has ended 24 hours after its local
 * midnight (the sandbox's offsets are fixed, so every local day is 24 hours long); a real vendor cannot have final
 * figures for a day before it ends, so by default a local day is served from its end on. Days held back by the
 * publishing rules are left out too. With `serveInProgress`, a running day is served with provisional values that
 * change every hour (a function of the seed and the hour), and its final values once it has ended.
 *
 * Every local midnight is a whole minute (offsets are whole minutes), so what is served only changes on a minute:
 * decisions are made at the start of `nowMs`'s minute, and cache keys name that minute when it matters.
 */
export function serveQuery(dataset: Dataset, query: QueryRefs, rules: ServingRules, nowMs: number): ServedQuery {
  const { publishing } = rules;
  const minute = Math.floor(nowMs / MINUTE_MS);
  const atMs = minute * MINUTE_MS;
  const instantOf = (storeIndex: number, localDay: number): number => Dataset.instantOf(localDay, dataset.store(storeIndex).offsetMinutes);
  const ended = (storeIndex: number, localDay: number): boolean => instantOf(storeIndex, localDay) + DAY_MS <= atMs;

  let refs = query;
  if (publishing.hidesAny) {
    refs = dataset.filter(
      refs,
      (storeIndex, localDay) => !publishing.isHidden(dataset.storeCode(storeIndex), instantOf(storeIndex, localDay)),
      `${refs.key}|p${rules.publishingGeneration}`,
    );
  }
  const running = refs.latestMs + DAY_MS > atMs;
  if (running && !rules.serveInProgress) refs = dataset.filter(refs, ended, `${refs.key}|m${minute}`);
  const provisionalSeed = dataset.provisionalSeed(Math.floor(atMs / HOUR_MS));
  const finalSeed = (storeIndex: number, localDay: number): number =>
    dataset.revisionSeed(publishing.revision(dataset.storeCode(storeIndex), instantOf(storeIndex, localDay)));
  const seedOf =
    running && rules.serveInProgress
      ? (storeIndex: number, localDay: number): number => (ended(storeIndex, localDay) ? finalSeed(storeIndex, localDay) : provisionalSeed)
      : finalSeed;
  const key = `${refs.key}|p${rules.publishingGeneration}${running && rules.serveInProgress ? `|m${minute}` : ''}`;
  const distortionOf = publishing.distortsAny
    ? (metric: string, storeIndex: number, localDay: number): number | undefined =>
        publishing.distortion(metric, dataset.storeCode(storeIndex), instantOf(storeIndex, localDay))
    : undefined;
  return { refs, seedOf, key, ...(distortionOf === undefined ? {} : { distortionOf }) };
}

/** The served results of refs[start, end), with their values as served: the seed's, distorted where a rule says. */
export function servedResults(dataset: Dataset, metric: string, served: ServedQuery, start: number, end: number): MetricResult[] {
  const { refs, seedOf, distortionOf } = served;
  const results = dataset.slice(metric, refs, start, end, seedOf);
  const descriptor = dataset.metric(metric);
  if (distortionOf === undefined || descriptor === undefined) return results;
  return results.map((result, offset) => {
    const factor = distortionOf(metric, refs.storeIndexes[start + offset]!, refs.localDays[start + offset]!);
    return factor === undefined ? result : distortResult(descriptor, result, factor);
  });
}
