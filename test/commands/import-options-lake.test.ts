import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/destination/open.js';
import { importConfigOf } from '../helpers/import-config.js';
import { UsageError } from '../../src/errors.js';

const required = { baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 'secret' };

describe('--layout and --openlineage-url', () => {
  it("the layout is the state's unless --layout or AREA_METRICS_LAYOUT says; the flag wins; anything else is exit 2", async () => {
    expect((await importConfigOf(required, {}, 1)).output.layout).toBeUndefined();
    expect((await importConfigOf(required, { AREA_METRICS_LAYOUT: 'hive' }, 1)).output.layout).toBe('hive');
    expect((await importConfigOf({ ...required, layout: 'flat' }, { AREA_METRICS_LAYOUT: 'hive' }, 1)).output.layout).toBe('flat');
    await expect(importConfigOf({ ...required, layout: 'partitioned' }, {}, 1)).rejects.toThrow(
      /--layout "partitioned" must be one of flat, hive/,
    );
    await expect(importConfigOf(required, { AREA_METRICS_LAYOUT: 'Hive' }, 1)).rejects.toThrow(UsageError);
  });

  it('-f or AREA_METRICS_FORMAT state the format; the flag wins; the env var does not apply to stdout', async () => {
    expect((await importConfigOf(required, { AREA_METRICS_FORMAT: 'parquet' }, 1)).output.format).toBe('parquet');
    expect((await importConfigOf({ ...required, format: 'ndjson' }, { AREA_METRICS_FORMAT: 'parquet' }, 1)).output.format).toBe('ndjson');
    expect((await importConfigOf({ ...required, output: '-' }, { AREA_METRICS_FORMAT: 'parquet' }, 1)).output.format).toBe('ndjson');
    await expect(importConfigOf({ ...required, output: '-', format: 'parquet' }, {}, 1)).rejects.toThrow(
      /Parquet is written to files only/,
    );
    await expect(importConfigOf(required, { AREA_METRICS_FORMAT: 'xlsx' }, 1)).rejects.toThrow(UsageError);
  });

  it('--layout with -o - is exit 2 (stdout has no files); the env var alone does not stop a quick look at stdout', async () => {
    await expect(importConfigOf({ ...required, output: '-', layout: 'hive' }, {}, 1)).rejects.toThrow(
      /--layout names files in a folder or bucket; stdout \(-o -\) has none/,
    );
    const { destination: output } = (await importConfigOf({ ...required, output: '-' }, { AREA_METRICS_LAYOUT: 'hive' }, 1)).output;
    expect(output).toMatchObject({ kind: 'stream', name: 'stdout', stateUrl: undefined });
    expect(capabilitiesOf(output)).toMatchObject({ files: false, sharedHeader: true });
  });

  it("lineage is off without a URL; OPENLINEAGE_URL or --openlineage-url turn it on with the clients' variables", async () => {
    expect((await importConfigOf(required, { OPENLINEAGE_API_KEY: 'k' }, 1)).output.lineage).toBeUndefined();
    const fromEnv = await importConfigOf(
      required,
      { OPENLINEAGE_URL: 'http://marquez:5000', OPENLINEAGE_API_KEY: 'key-1', OPENLINEAGE_NAMESPACE: '' },
      1,
    );
    expect(fromEnv.output.lineage).toEqual({
      endpoint: new URL('http://marquez:5000/api/v1/lineage'),
      apiKey: 'key-1',
      namespace: 'area-metrics',
    });
    const fromFlag = await importConfigOf(
      { ...required, openlineageUrl: 'https://lineage.example.com' },
      { OPENLINEAGE_URL: 'http://marquez:5000', OPENLINEAGE_NAMESPACE: 'nightly' },
      1,
    );
    expect(fromFlag.output.lineage).toEqual({ endpoint: new URL('https://lineage.example.com/api/v1/lineage'), namespace: 'nightly' });
    expect(
      (await importConfigOf(required, { OPENLINEAGE_URL: 'http://marquez:5000', OPENLINEAGE_DISABLED: 'true' }, 1)).output.lineage,
    ).toBeUndefined();
  });

  it('a lineage URL that is not http(s), or holds credentials, is exit 2 naming the flag or the variable', async () => {
    await expect(importConfigOf({ ...required, openlineageUrl: 'marquez:5000' }, {}, 1)).rejects.toThrow(
      /^--openlineage-url must be http or https/,
    );
    await expect(importConfigOf(required, { OPENLINEAGE_URL: 'http://u:p4ss@marquez' }, 1)).rejects.toThrow(
      /^OPENLINEAGE_URL must not contain credentials/,
    );
  });
});
