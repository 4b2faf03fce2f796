import { readSecretFile } from '../auth/secret-file.js';
import { UsageError } from '../errors.js';
import { envValue } from './options.js';

/**
 * Said once by a run whose secret came as a flag: every user of the machine can read a command line (`ps`). The env
 * var and the file are not warned about.
 */
export const SECRET_FLAG_WARNING =
  '--client-secret puts the secret on the command line, where every user of this machine can read it (ps); ' +
  'name a file with AREA_METRICS_CLIENT_SECRET_FILE (or --client-secret-file), or set AREA_METRICS_CLIENT_SECRET';

/** The same, for the token command's `--attestation-token`. */
export const ATTESTATION_FLAG_WARNING =
  '--attestation-token puts the token on the command line, where every user of this machine can read it (ps); ' +
  'set AREA_METRICS_ATTESTATION_TOKEN instead';

export interface SecretFlags {
  readonly clientSecret?: string | undefined;
  readonly clientSecretFile?: string | undefined;
}

/**
 * The client secret from `--client-secret`, `--client-secret-file`, or their env vars, in that order: a flag of
 * either kind beats both env vars, and two sources of the same rank are a usage error rather than a silent pick.
 * Returns where it came from too (for --verbose), never the secret in any message.
 */
export async function resolveClientSecret(flags: SecretFlags, env: NodeJS.ProcessEnv): Promise<{ secret: string; source: string }> {
  if (flags.clientSecret !== undefined && flags.clientSecretFile !== undefined) {
    throw new UsageError('--client-secret and --client-secret-file cannot be combined; use one');
  }
  if (flags.clientSecret !== undefined) return checked(flags.clientSecret, '--client-secret');
  if (flags.clientSecretFile !== undefined) {
    return checked(await readSecretFile(flags.clientSecretFile, '--client-secret-file'), `the file ${flags.clientSecretFile}`);
  }
  const secret = envValue(env, 'AREA_METRICS_CLIENT_SECRET');
  const file = envValue(env, 'AREA_METRICS_CLIENT_SECRET_FILE');
  if (secret !== undefined && file !== undefined) {
    throw new UsageError('AREA_METRICS_CLIENT_SECRET and AREA_METRICS_CLIENT_SECRET_FILE are both set; unset one');
  }
  if (secret !== undefined) return checked(secret, 'AREA_METRICS_CLIENT_SECRET');
  if (file !== undefined) {
    return checked(await readSecretFile(file, 'AREA_METRICS_CLIENT_SECRET_FILE'), `the file ${file} (AREA_METRICS_CLIENT_SECRET_FILE)`);
  }
  throw new UsageError(
    'missing client secret: pass --client-secret or --client-secret-file, or set AREA_METRICS_CLIENT_SECRET or AREA_METRICS_CLIENT_SECRET_FILE',
  );
}

function checked(secret: string, source: string): { secret: string; source: string } {
  if (secret === '') throw new UsageError(`the client secret from ${source} is empty`);
  return { secret, source };
}
