import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { passwordFilePath, passwordFromFile, passwordIn } from '../../../src/destination/postgres/pgpass.js';
import { useTempDirs } from '../../helpers/tmp.js';

const tempDir = useTempDirs('pgpass-');
const KEY = { host: 'db.example', port: 5432, database: 'metrics', user: 'loader' };

describe('the password file', () => {
  it('is PGPASSFILE, else ~/.pgpass', () => {
    expect(passwordFilePath({ PGPASSFILE: '/etc/pg/pass', HOME: '/home/u' })).toBe('/etc/pg/pass');
    expect(passwordFilePath({ HOME: '/home/u' })).toBe('/home/u/.pgpass');
  });

  it('gives the first line whose fields match or are *, with \\: and \\\\ read as libpq reads them', () => {
    const text = [
      '# comment',
      'db.example:5432:other:loader:not-this',
      'db.example:*:metrics:loader:pa\\:ss\\\\word',
      '*:*:*:*:fallback',
    ].join('\n');
    expect(passwordIn(text, KEY)).toBe('pa:ss\\word');
    expect(passwordIn(text, { ...KEY, user: 'someone' })).toBe('fallback');
    expect(passwordIn('db.example:5432:metrics:loader', KEY)).toBeUndefined();
    // A unix socket is `localhost` to the file.
    expect(passwordIn('localhost:5432:metrics:loader:local', { ...KEY, host: '/var/run/postgresql' })).toBe('local');
  });

  it('is ignored when others than its owner can read it, as libpq ignores it', async () => {
    const dir = await tempDir();
    const file = join(dir, 'pgpass');
    await writeFile(file, '*:*:*:*:secret-pw\n');
    await chmod(file, 0o640);
    expect(await passwordFromFile(file, KEY)).toBeUndefined();
    await chmod(file, 0o600);
    expect(await passwordFromFile(file, KEY)).toBe('secret-pw');
    expect(await passwordFromFile(join(dir, 'missing'), KEY)).toBeUndefined();
  });
});
