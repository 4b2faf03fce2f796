import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { awsCredentialsIn, stateUrlOf } from '../../src/commands/state-location.js';
import { UsageError } from '../../src/errors.js';

describe('stateUrlOf', () => {
  it('puts the state beside the output: in the folder, or as an object under the prefix', () => {
    expect(stateUrlOf('/data/area-metrics', undefined)).toBe(join('/data/area-metrics', '.area-metrics-state.json'));
    expect(stateUrlOf('s3://acme-data/area-metrics/', undefined)).toBe('s3://acme-data/area-metrics/.area-metrics-state.json');
    expect(stateUrlOf('s3://acme-data', undefined)).toBe('s3://acme-data/.area-metrics-state.json');
  });

  it('takes --state as given, and has none for stdout without it', () => {
    expect(stateUrlOf('s3://acme-data/x', '/var/lib/state.json')).toBe('/var/lib/state.json');
    expect(stateUrlOf('./out', 's3://other/states/a.json')).toBe('s3://other/states/a.json');
    expect(stateUrlOf('-', undefined)).toBeUndefined();
  });

  it('refuses a malformed bucket URL as a usage error', () => {
    expect(() => stateUrlOf('s3://x/y', undefined)).toThrow(UsageError);
  });
});

describe('awsCredentialsIn', () => {
  it('lists the key, secret and session token set in the environment, for redaction', () => {
    expect(awsCredentialsIn({ AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 'sec', AWS_SESSION_TOKEN: '', AWS_REGION: 'eu-west-1' })).toEqual([
      { secret: 'sec' },
      { secret: 'AKIA1' },
    ]);
  });
});
