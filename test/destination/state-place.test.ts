import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { awsCredentialsIn } from '../../src/destination/object-stores.js';
import { checkStateUrl, destinationSpec } from '../../src/destination/spec.js';
import { statePlace } from '../../src/destination/state-place.js';
import { UsageError } from '../../src/errors.js';

const placeOf = (output: string, state?: string) => statePlace(destinationSpec(output, '-o/--output'), state);

describe('statePlace', () => {
  it('puts the state beside the output: in the folder, or as an object under the prefix', () => {
    expect(placeOf('/data/area-metrics')).toMatchObject({ url: join('/data/area-metrics', '.area-metrics-state.json'), remote: false });
    expect(placeOf('s3://acme-data/area-metrics/')).toMatchObject({
      url: 's3://acme-data/area-metrics/.area-metrics-state.json',
      remote: true,
    });
    expect(placeOf('s3://acme-data')?.url).toBe('s3://acme-data/.area-metrics-state.json');
  });

  it('takes --state as given, and has none for stdout without it', () => {
    expect(placeOf('s3://acme-data/x', '/var/lib/state.json')).toMatchObject({ url: '/var/lib/state.json', remote: false });
    expect(placeOf('./out', 's3://other/states/a.json')).toMatchObject({ url: 's3://other/states/a.json', remote: true });
    expect(placeOf('-')).toBeUndefined();
  });

  it('refuses a malformed bucket URL, or a --state naming a bucket but no object, as a usage error', () => {
    expect(() => placeOf('s3://x/y')).toThrow(UsageError);
    expect(() => checkStateUrl('s3://acme-data', '--state')).toThrow(/names a bucket but no object/);
  });
});

describe('awsCredentialsIn', () => {
  it('lists the key, secret and session token set in the environment, for redaction', () => {
    expect(
      awsCredentialsIn({ AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 'sec', AWS_SESSION_TOKEN: '', AWS_REGION: 'eu-west-1' }),
    ).toEqual([{ secret: 'sec' }, { secret: 'AKIA1' }]);
  });
});
