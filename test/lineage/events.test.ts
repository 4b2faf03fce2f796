import { describe, expect, it } from 'vitest';
import { PRODUCER, runEvent, RUN_EVENT_SCHEMA_URL, type RunEventInput } from '../../src/lineage/events.js';
import { METRICS, typedColumns } from '../../src/metrics/descriptors.js';
import { openLineageErrors } from '../helpers/openlineage.js';

const RUN = { runId: '01a215fc-ef90-77c1-8935-c922ed61b953', namespace: 'area-metrics', job: 'traffic' };
const INPUTS = [{ namespace: 'https://api.example.com', name: '/api/bi/area-metrics/traffic/' }];
const OUTPUT = { namespace: 'file', name: '/data/area-metrics/metric=traffic', fields: typedColumns(METRICS.traffic) };
const at = new Date('2026-11-21T03:00:00Z');

function event(input: Partial<RunEventInput>): Record<string, unknown> {
  return runEvent({ type: 'START', time: at, run: RUN, inputs: INPUTS, outputs: [OUTPUT], ...input });
}

describe('OpenLineage run events', () => {
  it.each(['START', 'COMPLETE', 'ABORT'] as const)(
    'a %s event is a valid 2-0-2 RunEvent, its facets valid against their own schemas',
    (type) => {
      const built = event({
        type,
        outputs: [{ ...OUTPUT, ...(type === 'START' ? {} : { statistics: { rowCount: 12, size: 3400, fileCount: 2 } }) }],
      });
      expect(openLineageErrors(built)).toEqual([]);
      expect(built).toMatchObject({
        eventType: type,
        eventTime: at.toISOString(),
        producer: PRODUCER,
        schemaURL: RUN_EVENT_SCHEMA_URL,
        run: { runId: RUN.runId },
        job: { namespace: 'area-metrics', name: 'traffic' },
      });
    },
  );

  it('a FAIL carries the errorMessage run facet', () => {
    const built = event({ type: 'FAIL', errorMessage: 'traffic 2026-11-20: HTTP 503 after 5 retries' });
    expect(openLineageErrors(built)).toEqual([]);
    expect(built.run).toMatchObject({
      facets: { errorMessage: { message: 'traffic 2026-11-20: HTTP 503 after 5 retries', programmingLanguage: 'JavaScript' } },
    });
  });

  it("the schema facet is the metric's columns in file order, typed as catalogs name them", () => {
    const built = event({}) as { outputs: { facets: { schema: { fields: unknown[] } } }[] };
    expect(built.outputs[0]!.facets.schema.fields).toEqual([
      { name: 'store_code', type: 'string' },
      { name: 'date', type: 'timestamp' },
      { name: 'day', type: 'date' },
      { name: 'granularity', type: 'string' },
      { name: 'zone', type: 'string' },
      { name: 'traffic_pct', type: 'decimal(6,5)' },
    ]);
    const users = event({ outputs: [{ ...OUTPUT, fields: typedColumns(METRICS['unique-users']) }] }) as typeof built;
    expect(users.outputs[0]!.facets.schema.fields.at(-1)).toEqual({ name: 'unique_users', type: 'bigint' });
  });

  it('outputStatistics has the rows, bytes and files written', () => {
    const built = event({ type: 'COMPLETE', outputs: [{ ...OUTPUT, statistics: { rowCount: 12, size: 3400, fileCount: 2 } }] }) as {
      outputs: { outputFacets: unknown }[];
    };
    expect(built.outputs[0]!.outputFacets).toMatchObject({ outputStatistics: { rowCount: 12, size: 3400, fileCount: 2 } });
  });

  it('the validator does catch a broken event (a run id that is no UUID, a facet without its fields)', () => {
    expect(openLineageErrors(event({ run: { ...RUN, runId: 'run-1' } })).join('\n')).toMatch(/runId must match format "uuid"/);
    const broken = event({ type: 'FAIL', errorMessage: 'x' }) as { run: { facets: { errorMessage: Record<string, unknown> } } };
    delete broken.run.facets.errorMessage.programmingLanguage;
    expect(openLineageErrors(broken).join('\n')).toMatch(/errorMessage must have required property 'programmingLanguage'/);
  });
});
