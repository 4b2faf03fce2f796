import { describe, expect, it } from 'vitest';
import { PostgresDestination } from '../../../src/destination/postgres/destination.js';
import { parsePostgresUrl } from '../../../src/destination/postgres/url.js';
import { destinationSpec } from '../../../src/destination/spec.js';
import { silentLogger } from '../../../src/log/logger.js';

/** The destination for `-o url`, never connected: naming its datasets needs no server. */
function destinationFor(url: string): PostgresDestination {
  return new PostgresDestination(destinationSpec(url, '-o'), parsePostgresUrl(url, '-o'), { env: {}, retries: 0, logger: silentLogger });
}

describe('a PostgreSQL destination as lineage names it', () => {
  it('is the table in namespace postgres://host:port, name db.schema.table; an IPv6 host in brackets, a socket folder encoded', () => {
    expect(destinationFor('postgresql://loader@db.example:6543/analytics?schema=area_metrics').dataset('traffic')).toEqual({
      namespace: 'postgres://db.example:6543',
      name: 'analytics.area_metrics.traffic',
    });
    expect(destinationFor('postgresql://loader@[::1]/analytics').dataset('unique-users')).toEqual({
      namespace: 'postgres://[::1]:5432',
      name: 'analytics.public.unique_users',
    });
    expect(destinationFor('postgresql:///analytics?host=/var/run/postgresql&user=loader').dataset('avg-screen-time').namespace).toBe(
      'postgres://%2Fvar%2Frun%2Fpostgresql:5432',
    );
  });
});
