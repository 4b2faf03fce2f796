import { describe, expect, it } from 'vitest';
import { databaseError } from '../../../src/destination/postgres/failures.js';
import { AuthError, exitCodeFor, OutputError, UnavailableError, UsageError } from '../../../src/errors.js';

describe("the database's failures", () => {
  const coded = (code: string, message = 'server words') => Object.assign(new Error(message), { code });
  it.each([
    ['08006', UnavailableError],
    ['ECONNREFUSED', UnavailableError],
    ['28P01', AuthError],
    ['28000', AuthError],
    ['42501', OutputError],
    ['53100', OutputError],
    ['57014', OutputError],
    ['25006', OutputError],
    ['55P03', OutputError],
    ['42703', UsageError],
    ['42P01', UsageError],
    ['XX000', OutputError],
    ['P0001', OutputError],
  ])('%s is %o, one line naming the server and the reason', (code, type) => {
    const error = databaseError(coded(code), 'cannot load x into', 'postgresql://u@h:5432/d');
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toMatch(new RegExp(`^cannot load x into postgresql://u@h:5432/d: .*\\(${code}: server words\\)$`));
  });

  it("leaves what is not the server's answer (a bug) as it is: exit 1", () => {
    const odd = coded('EWEIRD');
    expect(databaseError(odd, 'x', 'y')).toBe(odd);
    expect(exitCodeFor(databaseError(new TypeError('bug'), 'x', 'y'))).toBe(1);
  });
});
