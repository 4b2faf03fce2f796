import { readFile } from 'node:fs/promises';
import { errnoCode, UsageError } from '../errors.js';

/** A secret file's text without the trailing newline(s) (LF or CRLF) that editors and `echo` add. */
export function secretFromFileText(text: string): string {
  return text.replace(/[\r\n]+$/, '');
}

/**
 * Reads a client secret from a file (a Docker/Kubernetes secret mount, a file written by `echo`), trimming the
 * trailing newline(s) editors and `echo` add. Errors name the path and the reason, never the content.
 */
export async function readSecretFile(path: string, option = '--client-secret-file'): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = errnoCode(error) ?? 'unreadable';
    throw new UsageError(`cannot read the client secret file ${path} (${option}): ${code}`);
  }
  const secret = secretFromFileText(text);
  if (secret === '') throw new UsageError(`the client secret file ${path} (${option}) is empty`);
  return secret;
}
