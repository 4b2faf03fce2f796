import type { ParquetColumnType } from '../output/parquet.js';
import { VERSION } from '../version.js';

/** The RunEvent of the OpenLineage spec version this tool writes, and the facet versions it uses. */
export const RUN_EVENT_SCHEMA_URL = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const FACET_SCHEMA_URLS = {
  schema: 'https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet',
  outputStatistics:
    'https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet',
  errorMessage: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
} as const;

/** Who wrote the events: the package at its version. */
export const PRODUCER = `https://www.npmjs.com/package/area-metrics/v/${VERSION}`;

export type RunEventType = 'START' | 'COMPLETE' | 'FAIL' | 'ABORT';

/** A dataset as OpenLineage names it: a namespace (where) and a name (what, within it). */
export interface DatasetName {
  readonly namespace: string;
  readonly name: string;
}

/** A column of an output, typed. */
export interface DatasetField {
  readonly name: string;
  readonly type: ParquetColumnType;
}

/** What a run wrote into one output dataset. */
export interface OutputStatistics {
  readonly rowCount: number;
  /** Bytes of the files. */
  readonly size: number;
  readonly fileCount: number;
}

export interface OutputDataset extends DatasetName {
  /** Absent when the files have no fixed columns (`--shape results`). */
  readonly fields?: readonly DatasetField[];
  readonly statistics?: OutputStatistics;
}

/** One run's identity: its id and its job. */
export interface LineageRunId {
  readonly runId: string;
  readonly namespace: string;
  /** The job's name: the command (`traffic`, `all`). */
  readonly job: string;
}

export interface RunEventInput {
  readonly type: RunEventType;
  readonly time: Date;
  readonly run: LineageRunId;
  readonly inputs: readonly DatasetName[];
  readonly outputs: readonly OutputDataset[];
  /** With FAIL: what failed, in one line. */
  readonly errorMessage?: string;
}

/** The facet fields every facet carries. */
function facet(kind: keyof typeof FACET_SCHEMA_URLS): { _producer: string; _schemaURL: string } {
  return { _producer: PRODUCER, _schemaURL: FACET_SCHEMA_URLS[kind] };
}

/** The catalogs' (Hive, Athena, Spark SQL) names of our column types; the files' own types are in docs/import.md. */
const CATALOG_TYPES: Readonly<Record<string, string>> = {
  string: 'string',
  timestamp: 'timestamp',
  date: 'date',
  int32: 'int',
  int64: 'bigint',
};

function catalogType(type: ParquetColumnType): string {
  return CATALOG_TYPES[type] ?? type;
}

/** An OpenLineage 2-0-2 RunEvent, as JSON-ready data. */
export function runEvent(input: RunEventInput): Record<string, unknown> {
  const runFacets =
    input.errorMessage === undefined
      ? {}
      : { errorMessage: { ...facet('errorMessage'), message: input.errorMessage, programmingLanguage: 'JavaScript' } };
  return {
    eventType: input.type,
    eventTime: input.time.toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_EVENT_SCHEMA_URL,
    run: { runId: input.run.runId, facets: runFacets },
    job: { namespace: input.run.namespace, name: input.run.job, facets: {} },
    inputs: input.inputs.map(({ namespace, name }) => ({ namespace, name, facets: {} })),
    outputs: input.outputs.map((output) => ({
      namespace: output.namespace,
      name: output.name,
      facets:
        output.fields === undefined
          ? {}
          : { schema: { ...facet('schema'), fields: output.fields.map((field) => ({ name: field.name, type: catalogType(field.type) })) } },
      ...(output.statistics === undefined
        ? {}
        : { outputFacets: { outputStatistics: { ...facet('outputStatistics'), ...output.statistics } } }),
    })),
  };
}
