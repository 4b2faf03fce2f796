import type { ParquetColumnType } from '../output/parquet.js';
import { VERSION } from '../version.js';
import type { RunReference } from './parent.js';

/** The RunEvent of the OpenLineage spec version this tool writes, and the facet versions it uses. */
export const RUN_EVENT_SCHEMA_URL = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const FACET_SCHEMA_URLS = {
  schema: 'https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet',
  outputStatistics:
    'https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet',
  errorMessage: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
  jobType: 'https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet',
  nominalTime: 'https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet',
  parent: 'https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet',
  processingEngine: 'https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet',
  storage: 'https://openlineage.io/spec/facets/1-0-1/StorageDatasetFacet.json#/$defs/StorageDatasetFacet',
  subset: 'https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json#/$defs/OutputSubsetOutputDatasetFacet',
  // The spec has no partitioning facet yet: ours, shipped in docs/openlineage/.
  partitioning:
    'https://github.com/area-metrics/area-metrics/blob/main/docs/openlineage/PartitioningDatasetFacet.json#/$defs/PartitioningDatasetFacet',
} as const;

/** The project's repository: who wrote the events (the package is not published to a registry). */
export const PRODUCER = 'https://github.com/area-metrics/area-metrics';

/** The integration's name in the job type facet, as Spark's is `SPARK` and dbt's `DBT`. */
export const INTEGRATION = 'AREA_METRICS';

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
  /** Where and in what format the files are: `file` or `s3`, and `csv`, `ndjson` or `parquet`. */
  readonly storage?: { readonly layer: string; readonly fileFormat: string };
  /** With the hive layout: its partition columns, outermost first (`metric`, `dt`). */
  readonly partitionColumns?: readonly string[];
  /** With the hive layout, once the run is over: the partitions it wrote, each its columns' values. */
  readonly partitions?: readonly Readonly<Record<string, string>>[];
}

/** One run's identity: its id and its job. */
export interface LineageRunId {
  readonly runId: string;
  readonly namespace: string;
  /** The job's name: the command and the kind of run (`all.catch-up`, `traffic.backfill`). */
  readonly job: string;
  /** The days it covers: from the start of the first (UTC) to the end of the last. */
  readonly nominal?: { readonly start: string; readonly end: string };
  /** The run that started it (a scheduler's task) and the root of that tree. */
  readonly parent?: RunReference;
  readonly root?: RunReference;
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

/** The run's facets: what kind of engine, which days, which parent; and with FAIL, what failed. */
function runFacets(input: RunEventInput): Record<string, unknown> {
  const { nominal, parent, root } = input.run;
  const reference = (run: RunReference): { run: { runId: string }; job: { namespace: string; name: string } } => ({
    run: { runId: run.runId },
    job: { namespace: run.namespace, name: run.job },
  });
  return {
    processing_engine: { ...facet('processingEngine'), version: VERSION, name: 'area-metrics', openlineageAdapterVersion: VERSION },
    ...(nominal === undefined
      ? {}
      : { nominalTime: { ...facet('nominalTime'), nominalStartTime: nominal.start, nominalEndTime: nominal.end } }),
    ...(parent === undefined
      ? {}
      : { parent: { ...facet('parent'), ...reference(parent), ...(root === undefined ? {} : { root: reference(root) }) } }),
    ...(input.errorMessage === undefined
      ? {}
      : { errorMessage: { ...facet('errorMessage'), message: input.errorMessage, programmingLanguage: 'JavaScript' } }),
  };
}

/** A partition as a path (`metric=traffic/dt=2026-11-20`) and its columns' values. */
function partitionOf(dimensions: Readonly<Record<string, string>>): { identifier: string; dimensions: Readonly<Record<string, string>> } {
  const identifier = Object.entries(dimensions)
    .map(([column, value]) => `${column}=${value}`)
    .join('/');
  return { identifier, dimensions };
}

/**
 * An output's dataset facets (columns, storage, partitioning) and output facets (what the run wrote; the partitions
 * also as the spec's `subset` facet, which catalogs that know no `partitioning` facet read).
 */
function outputOf(output: OutputDataset): Record<string, unknown> {
  const partitions = (output.partitions ?? []).map(partitionOf);
  const columns = output.partitionColumns;
  const facets = {
    ...(output.fields === undefined
      ? {}
      : { schema: { ...facet('schema'), fields: output.fields.map((field) => ({ name: field.name, type: catalogType(field.type) })) } }),
    ...(output.storage === undefined
      ? {}
      : { storage: { ...facet('storage'), storageLayer: output.storage.layer, fileFormat: output.storage.fileFormat } }),
    ...(columns === undefined
      ? {}
      : {
          partitioning: {
            ...facet('partitioning'),
            dimensions: columns.map((column) => ({ fields: [column] })),
            description: columns.map((column) => `${column}=<${column}>`).join('/'),
            ...(partitions.length === 0 ? {} : { partitions }),
          },
        }),
  };
  const outputFacets = {
    ...(output.statistics === undefined ? {} : { outputStatistics: { ...facet('outputStatistics'), ...output.statistics } }),
    ...(partitions.length === 0 ? {} : { subset: { ...facet('subset'), outputCondition: { type: 'partition', partitions } } }),
  };
  return {
    namespace: output.namespace,
    name: output.name,
    facets,
    ...(Object.keys(outputFacets).length === 0 ? {} : { outputFacets }),
  };
}

/** An OpenLineage 2-0-2 RunEvent, as JSON-ready data. */
export function runEvent(input: RunEventInput): Record<string, unknown> {
  return {
    eventType: input.type,
    eventTime: input.time.toISOString(),
    producer: PRODUCER,
    schemaURL: RUN_EVENT_SCHEMA_URL,
    run: { runId: input.run.runId, facets: runFacets(input) },
    job: {
      namespace: input.run.namespace,
      name: input.run.job,
      facets: { jobType: { ...facet('jobType'), processingType: 'BATCH', integration: INTEGRATION, jobType: 'JOB' } },
    },
    inputs: input.inputs.map(({ namespace, name }) => ({ namespace, name, facets: {} })),
    outputs: input.outputs.map(outputOf),
  };
}
