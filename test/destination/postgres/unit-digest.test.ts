import { describe, expect, it } from 'vitest';
import { unitDigest } from '../../../src/destination/postgres/unit-digest.js';

const pieces = (...lines: string[]) => ({ pieces: lines.map((line) => Buffer.from(line)) });

describe("a unit's digest", () => {
  it('is the SHA-256 of its rows as loaded, and their size; any other value or set-aside record changes it', () => {
    const rows = pieces(
      'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,A,0.40000\n',
      'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,B,0.60000\n',
    );
    const first = unitDigest(rows, []);
    expect(first).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: 112 });
    expect(
      unitDigest(
        pieces('S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,A,0.40000\nS1,2026-11-20T00:00:00+02:00,2026-11-20,daily,B,0.60000\n'),
        [],
      ),
    ).toEqual(first);
    expect(
      unitDigest(
        pieces('S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,A,0.40001\n', 'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,B,0.59999\n'),
        [],
      ).sha256,
    ).not.toBe(first.sha256);
    expect(unitDigest(rows, ['{"field":"zone"}\n']).sha256).not.toBe(first.sha256);
  });
});
