import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What a password file line is matched against: the server and the role, as the connection uses them. */
export interface PasswordKey {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

/** The password file libpq reads: `PGPASSFILE`, else `~/.pgpass`. */
export function passwordFilePath(env: NodeJS.ProcessEnv): string | undefined {
  if (env.PGPASSFILE) return env.PGPASSFILE;
  return env.HOME ? join(env.HOME, '.pgpass') : undefined;
}

/** A line's fields: `host:port:database:user:password`, where `\:` and `\\` are a colon and a backslash. */
function fieldsOf(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  for (let index = 0; index < line.length; index++) {
    const char = line[index]!;
    if (char === '\\' && index + 1 < line.length) field += line[++index];
    else if (char === ':' && fields.length < 4) {
      fields.push(field);
      field = '';
    } else field += char;
  }
  fields.push(field);
  return fields;
}

/**
 * The password for `key` in a password file's text: the first line whose four fields each equal the key's or are
 * `*`, as libpq matches them (a unix socket's host matches `localhost`); undefined when none does.
 */
export function passwordIn(text: string, key: PasswordKey): string | undefined {
  const wanted = [key.host.startsWith('/') ? 'localhost' : key.host, String(key.port), key.database, key.user];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const fields = fieldsOf(line);
    if (fields.length !== 5) continue;
    if (wanted.every((value, index) => fields[index] === '*' || fields[index] === value)) return fields[4];
  }
  return undefined;
}

/**
 * The password file's password for `key`; undefined when there is no file, no line matches, or the file can be read
 * by others than its owner (libpq ignores such a file too, so a password never comes from a file anyone can read).
 */
export async function passwordFromFile(path: string, key: PasswordKey): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile() || (process.platform !== 'win32' && (info.mode & 0o077) !== 0)) return undefined;
    return passwordIn(await readFile(path, 'utf8'), key);
  } catch {
    return undefined;
  }
}
