import { describe, expect, it } from 'vitest';
import { answerBound, BOUND_NAMES, DEFAULT_BOUNDS, duration, settleBounds } from '../../../src/destination/postgres/bounds.js';

/** pg_settings rows for every bound, each `setting` from `source`, with `changes` over them. */
function settings(source: string, setting: string, changes: Record<string, { setting: string; source: string }> = {}) {
  return BOUND_NAMES.map((name) => ({ name, setting, source, ...changes[name] }));
}

describe("a session's bounds", () => {
  it("are ours where the server has none (0 is PostgreSQL's default for each): no single wait over 2 minutes", () => {
    const { toSet, bounds } = settleBounds(settings('default', '0'));
    expect(Object.fromEntries(toSet.map((bound) => [bound.name, bound.value]))).toEqual(
      Object.fromEntries(Object.entries(DEFAULT_BOUNDS).map(([name, value]) => [name, String(value)])),
    );
    expect(bounds).toEqual({ lockTimeoutMs: 60_000, statementTimeoutMs: 110_000, answerMs: 120_000 });
    for (const ms of [bounds.lockTimeoutMs, bounds.statementTimeoutMs, bounds.answerMs ?? Infinity])
      expect(ms).toBeLessThanOrEqual(120_000);
  });

  it("keep a tighter one of the server's, the role's or the database's, and cap a looser one", () => {
    const { toSet, bounds } = settleBounds(
      settings('default', '0', {
        lock_timeout: { setting: '2000', source: 'user' },
        statement_timeout: { setting: '600000', source: 'database' },
        idle_in_transaction_session_timeout: { setting: '5000', source: 'configuration file' },
      }),
    );
    const names = toSet.map((bound) => bound.name);
    expect(names).not.toContain('lock_timeout');
    expect(names).not.toContain('idle_in_transaction_session_timeout');
    expect(toSet).toContainEqual({ name: 'statement_timeout', value: '110000' });
    expect(bounds).toEqual({ lockTimeoutMs: 2000, statementTimeoutMs: 110_000, answerMs: 120_000 });
  });

  it("take what the URL's options or PGOPTIONS say (source client), looser or 0, and the client's wait follows", () => {
    const { toSet, bounds } = settleBounds(
      settings('default', '0', {
        lock_timeout: { setting: '300000', source: 'client' },
        statement_timeout: { setting: '0', source: 'client' },
      }),
    );
    expect(toSet.map((bound) => bound.name)).not.toContain('lock_timeout');
    expect(toSet.map((bound) => bound.name)).not.toContain('statement_timeout');
    // Statements unbounded by request: the client waits for their answer as long as they run.
    expect(bounds).toEqual({ lockTimeoutMs: 300_000, statementTimeoutMs: 0, answerMs: undefined });
  });

  it('leave out a setting the server does not have (client_connection_check_interval before PostgreSQL 14)', () => {
    const older = settings('default', '0').filter((row) => row.name !== 'client_connection_check_interval');
    expect(settleBounds(older).toSet.map((bound) => bound.name)).not.toContain('client_connection_check_interval');
  });

  it("wait for an answer a tenth (1 to 10 s) longer than a statement may run, so the server's timeout comes first", () => {
    expect([300, 1000, 30_000, 110_000, 600_000, 0].map(answerBound)).toEqual([1300, 2000, 33_000, 120_000, 610_000, undefined]);
    expect([300, 1000, 1500, 60_000].map(duration)).toEqual(['300 ms', '1 s', '1.5 s', '60 s']);
  });
});
