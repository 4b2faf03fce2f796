/**
 * The run reads what a destination holds from its row, never its kind: a fifth destination, made here as a test
 * fixture (units kept in memory, the state where --state names it), takes its turn, keeps its settings and gets the
 * run's day mode as its row says, with nothing else added anywhere.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DestinationCapabilities } from '../../src/destination/capabilities.js';
import { PLAIN_DESTINATION, type Destination, type DestinationPlan } from '../../src/destination/destination.js';
import { ObjectStores } from '../../src/destination/object-stores.js';
import type { DestinationSpec } from '../../src/destination/spec.js';
import { statePlace, type StatePlace } from '../../src/destination/state-place.js';
import { importMetrics } from '../../src/import/import-run.js';
import { describeImport } from '../../src/import/invocation.js';
import { silentLogger } from '../../src/log/logger.js';
import { createImportProgress } from '../../src/log/progress.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import type { UnitSink } from '../../src/output/sinks.js';
import type { StaleTempFile } from '../../src/output/stale-temp.js';
import { importConfigOf } from '../helpers/import-config.js';
import { daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';
import { useSandbox } from '../helpers/vendor.js';

/** A destination's row as the memory destination below holds it; each test changes what it is about. */
const ROW: DestinationCapabilities = {
  files: false,
  formats: ['csv', 'ndjson'],
  defaultFormat: 'ndjson',
  shapes: ['rows'],
  state: 'named-only',
  keeps: ['mode'],
  sharedHeader: false,
  commitsAhead: false,
  oneRunAtATime: false,
  refusals: {},
};

/** Units kept in memory; what the run asked of it, in order. */
class MemoryDestination implements Destination {
  readonly asked: string[] = [];
  readonly close = PLAIN_DESTINATION.close;
  readonly rejectedPlace = PLAIN_DESTINATION.rejectedPlace;

  constructor(
    readonly spec: DestinationSpec,
    readonly capabilities: DestinationCapabilities,
  ) {}

  claim(): Promise<void> {
    this.asked.push('claim');
    return Promise.resolve();
  }

  prepare(): Promise<readonly StaleTempFile[]> {
    return Promise.resolve([]);
  }

  sink(plan: DestinationPlan): Promise<UnitSink> {
    this.asked.push(`sink of ${plan.dayMode} days`);
    return Promise.resolve({
      commit: ({ unit }) => {
        this.asked.push(`commit ${unit.metric.name} ${unit.day}`);
        return Promise.resolve({ changed: true });
      },
      describe: () => 'memory',
    });
  }

  manifests(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  storedFile(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  dataset(): undefined {
    return undefined;
  }

  statePlace(state: string | undefined): StatePlace | undefined {
    const place = statePlace(this.spec, state);
    if (place === undefined) return undefined;
    const storage = (stores: ObjectStores) => {
      this.asked.push('state read');
      return place.storage(stores);
    };
    return { ...place, storage };
  }
}

const CLOCK = noonToday();
const DAY = daysBefore(CLOCK)(2);
const SECRET = 'fifth-destination-secret';
const tempDir = useTempDirs('fifth-destination-');
const sandbox = useSandbox({ stores: 3, zones: 2, days: 4, clientSecret: SECRET, now: () => CLOCK });

/** One day of traffic imported into a memory destination of this row, its state in a file; what it was asked and the state's text. */
async function importInto(row: DestinationCapabilities, days: 'utc' | 'local'): Promise<{ asked: readonly string[]; state: unknown }> {
  const statePath = join(await tempDir(), 'state.json');
  const collected = {
    baseUrl: sandbox.url,
    clientId: sandbox.clientId,
    clientSecret: SECRET,
    output: '-',
    state: statePath,
    date: DAY,
    days,
  };
  const config = await importConfigOf(collected, {}, 1);
  const destination = new MemoryDestination({ kind: 'stream', name: 'memory', output: undefined, stateUrl: undefined }, row);
  const stores = new ObjectStores({ env: {}, forcePathStyle: false, retries: 0, timeoutMs: 1000, logger: silentLogger });
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const failed: number[] = [];
  await importMetrics([METRICS.traffic], config, describeImport('traffic', config), {
    stdout: quiet,
    env: {},
    signal: new AbortController().signal,
    now: () => CLOCK,
    progress: await createImportProgress(quiet, { format: 'text', level: 'error' }),
    redact: (text) => text,
    failed: (code) => failed.push(code),
    destination,
    stores,
  });
  expect(failed).toEqual([]);
  return { asked: destination.asked, state: JSON.parse(await readFile(statePath, 'utf8')) };
}

describe('a fifth destination, read from its row', () => {
  it('takes its turn before the state is read only where its row admits one run at a time', async () => {
    const alone = await importInto({ ...ROW, oneRunAtATime: true }, 'utc');
    expect(alone.asked.slice(0, 2)).toEqual(['claim', 'state read']);
    expect(alone.asked).toContain(`commit traffic ${DAY}`);
    const side = await importInto(ROW, 'utc');
    expect(side.asked).not.toContain('claim');
    expect(side.asked).toContain(`commit traffic ${DAY}`);
  });

  it('has its state keep the settings its row names, and is told what the days are', async () => {
    const modeOnly = await importInto(ROW, 'local');
    expect(modeOnly.asked).toContain('sink of local days');
    expect(modeOnly.state).toMatchObject({ days: 'local' });
    expect(modeOnly.state).not.toHaveProperty('format');
    const everything = await importInto({ ...ROW, keeps: ['mode', 'layout', 'format'] }, 'utc');
    expect(everything.asked).toContain('sink of utc days');
    expect(everything.state).toMatchObject({ format: 'ndjson' });
    expect(everything.state).not.toHaveProperty('days');
  });
});
