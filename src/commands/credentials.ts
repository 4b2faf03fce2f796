import { readSecretFile } from '../auth/secret-file.js';
import { UsageError } from '../errors.js';
import type { ClientCredentials } from '../fetch/basic-auth.js';
import type { OptionSource } from './options.js';

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

/** The credential rows' values (`CREDENTIAL_OPTIONS`) and where each came from. */
export interface CredentialOptions {
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly clientSecretFile: string | undefined;
}
type CredentialSource = (key: 'clientSecret' | 'clientSecretFile') => OptionSource;

/** Credentials and where the secret came from (for --verbose, and the warning about a secret on the command line). */
export interface ResolvedCredentials extends ClientCredentials {
  readonly secretSource: string;
  readonly secretOnCommandLine: boolean;
}

/**
 * The client id, and the secret from `--client-secret`, `--client-secret-file`, or their env vars, in that order: a
 * flag of either kind beats both env vars, and two sources of the same rank are a usage error rather than a silent
 * pick. No message ever holds the secret.
 */
export async function resolveCredentials(options: CredentialOptions, given: CredentialSource): Promise<ResolvedCredentials> {
  if (options.clientId === undefined) throw new UsageError('missing --client-id (or AREA_METRICS_CLIENT_ID)');
  const { secret, source } = await resolveSecret(options, given);
  return { clientId: options.clientId, clientSecret: secret, secretSource: source, secretOnCommandLine: source === '--client-secret' };
}

async function resolveSecret(options: CredentialOptions, given: CredentialSource): Promise<{ secret: string; source: string }> {
  const flag = given('clientSecret') === 'flag' ? options.clientSecret : undefined;
  const fileFlag = given('clientSecretFile') === 'flag' ? options.clientSecretFile : undefined;
  if (flag !== undefined && fileFlag !== undefined)
    throw new UsageError('--client-secret and --client-secret-file cannot be combined; use one');
  if (flag !== undefined) return checked(flag, '--client-secret');
  if (fileFlag !== undefined) return checked(await readSecretFile(fileFlag, '--client-secret-file'), `the file ${fileFlag}`);
  const secret = given('clientSecret') === 'env' ? options.clientSecret : undefined;
  const file = given('clientSecretFile') === 'env' ? options.clientSecretFile : undefined;
  if (secret !== undefined && file !== undefined) {
    throw new UsageError('AREA_METRICS_CLIENT_SECRET and AREA_METRICS_CLIENT_SECRET_FILE are both set; unset one');
  }
  if (secret !== undefined) return checked(secret, 'AREA_METRICS_CLIENT_SECRET');
  if (file !== undefined)
    return checked(await readSecretFile(file, 'AREA_METRICS_CLIENT_SECRET_FILE'), `the file ${file} (AREA_METRICS_CLIENT_SECRET_FILE)`);
  throw new UsageError(
    'missing client secret: pass --client-secret or --client-secret-file, or set AREA_METRICS_CLIENT_SECRET or AREA_METRICS_CLIENT_SECRET_FILE',
  );
}

function checked(secret: string, source: string): { secret: string; source: string } {
  if (secret === '') throw new UsageError(`the client secret from ${source} is empty`);
  return { secret, source };
}
