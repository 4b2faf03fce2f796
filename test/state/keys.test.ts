import { describe, expect, it } from 'vitest';
import { isKnownKey, metricOfKey, stateKey } from '../../src/state/keys.js';

describe('state keys', () => {
  it('keys store-limited runs apart from whole runs', () => {
    expect(stateKey('traffic', [])).toBe('traffic');
    expect(stateKey('traffic', ['B', 'A'])).toBe('traffic[store=A,B]');
  });

  it('a key names its metric, whole or limited to stores', () => {
    expect(metricOfKey('traffic[store=A,B]')).toBe('traffic');
    expect(isKnownKey('traffic[store=A,B]', ['traffic'])).toBe(true);
    expect(isKnownKey('trafic', ['traffic'])).toBe(false);
  });
});
