import { describe, expect, it } from 'vitest';
import { describeHolder } from '../../../src/destination/postgres/run-lock.js';

describe('the run holding the lock, as a waiting run names it', () => {
  it('by server pid, application name, address and since when, as pg_stat_activity shows them', () => {
    const since = new Date('2026-11-20T03:00:00.000Z');
    expect(describeHolder({ pid: 4242, application_name: 'area-metrics all', client_addr: '10.0.0.7', since })).toBe(
      'another run (server pid 4242, "area-metrics all" from 10.0.0.7, connected since 2026-11-20T03:00:00.000Z)',
    );
    expect(describeHolder({ pid: 7, application_name: '', client_addr: null, since: null })).toBe(
      'another run (server pid 7, "no application name" from a local socket, connected since an unknown time)',
    );
    // Gone between the try and the look: nobody to name.
    expect(describeHolder(undefined)).toBe('another run');
  });
});
