// How an S3-compatible store's failures are told: each mapped to its exit code and the words that name its cause.
import { AuthError, OutputError, UnavailableError, UsageError } from '../errors.js';
import { objectUrl } from './object-location.js';

/** The parts of an SDK or network error we decide on. */
interface FailureFacts {
  readonly code: string;
  readonly status: number | undefined;
  readonly attempts: number | undefined;
  readonly storeMessage: string | undefined;
}

function factsOf(error: unknown): FailureFacts | undefined {
  if (!(error instanceof Error)) return undefined;
  const raw = error as Error & {
    code?: unknown;
    Code?: unknown;
    $metadata?: { httpStatusCode?: number; attempts?: number };
    $fault?: unknown;
  };
  const status = raw.$metadata?.httpStatusCode;
  const networkCode = typeof raw.code === 'string' ? raw.code : undefined;
  const isSdkError = raw.$fault !== undefined || status !== undefined || raw.$metadata !== undefined;
  const code =
    networkCode ??
    (typeof raw.Code === 'string' ? raw.Code : undefined) ??
    (error.name !== 'Error' ? error.name : undefined) ??
    (status === undefined ? undefined : `HTTP ${status}`);
  // A Node error with some other code (ERR_INVALID_ARG_TYPE...) is a bug, not the store's answer.
  const isNetworkError = networkCode !== undefined && NETWORK_CODES.has(networkCode);
  if (code === undefined || (!isSdkError && !isNetworkError && !SDK_ERROR_NAMES.has(error.name))) return undefined;
  // One line, short, and only what the store said: never the request, which names the access key.
  const message = error.message.replace(/\s+/g, ' ').trim().slice(0, 200);
  const storeMessage = message === '' || message === 'UnknownError' || message === code ? undefined : message;
  return { code, status, attempts: raw.$metadata?.attempts, storeMessage };
}

/** SDK errors thrown before any answer: no credentials anywhere in the chain, a request timed out. */
const SDK_ERROR_NAMES = new Set(['CredentialsProviderError', 'TimeoutError', 'RequestTimeout']);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'TimeoutError',
  'RequestTimeout',
]);

/** The store rejects who we are (not what we may do): wrong, expired or revoked keys and tokens. */
const CREDENTIAL_CODES = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
]);

/** The bucket lives elsewhere: another region, or an endpoint that is not the bucket's. */
const REGION_CODES = new Set([
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
  'MovedPermanently',
]);

/** What a failed operation was doing, for the message and for the exit code of a refusal. */
export type ObjectAction = 'read' | 'write' | 'remove';

/**
 * The typed error a failed store operation means: bad or expired credentials exit 3; no credentials, a wrong
 * region or endpoint exit 2; a store unreachable or failing after retries exit 4; a store that refuses (no such
 * bucket, access denied, quota) exit 7 for a write, and exit 2 for a read (the configuration names something the
 * tool cannot use, before anything was written). An interrupt or a bug is returned as it is.
 */
export function objectStoreError(error: unknown, action: ObjectAction, bucket: string, key: string, endpoint: string | undefined): unknown {
  if (error instanceof Error && /region is missing/i.test(error.message)) {
    return new UsageError(`cannot ${action} ${objectUrl(bucket, key)}: no AWS region configured; set AWS_REGION`, { cause: error });
  }
  const facts = factsOf(error);
  if (facts === undefined) return error;
  const { code, status } = facts;
  const url = objectUrl(bucket, key);
  const what = `cannot ${action} ${url}`;
  const said = facts.storeMessage === undefined ? '' : ` (${facts.storeMessage})`;
  const where = endpoint ?? 'AWS S3';
  if ((error as Error).name === 'CredentialsProviderError') {
    return new UsageError(
      `${what}: no AWS credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with a role`,
      { cause: error },
    );
  }
  if (CREDENTIAL_CODES.has(code)) {
    return new AuthError(`${what}: the store rejected the credentials: ${code}${said}; check or renew the AWS credentials`, {
      cause: error,
    });
  }
  if (REGION_CODES.has(code) || status === 301) {
    return new UsageError(
      `${what}: ${code}${said}: the bucket is not at ${where} in this region; set AWS_REGION to the bucket's region or fix AWS_ENDPOINT_URL_S3`,
      { cause: error },
    );
  }
  if (NETWORK_CODES.has(code) || (status !== undefined && (status >= 500 || status === 429)) || code === 'SlowDown') {
    const tries = facts.attempts === undefined ? '' : ` after ${facts.attempts} attempt${facts.attempts === 1 ? '' : 's'}`;
    const hint =
      code === 'ENOTFOUND'
        ? '; check the endpoint and bucket name (a store other than AWS may need --s3-force-path-style)'
        : '; run again later';
    return new UnavailableError(`${what}: the object store at ${where} is unreachable or failing (${code}${said})${tries}${hint}`, {
      cause: error,
    });
  }
  const remedy =
    code === 'NoSuchBucket'
      ? 'create the bucket or fix the name'
      : code === 'AccessDenied' || status === 403
        ? 'grant the tool s3:GetObject, s3:PutObject and s3:ListBucket on it (docs/import.md)'
        : 'check the bucket and the store';
  const message = `${what}: the store refused: ${code}${said}; ${remedy}`;
  return action === 'read' ? new UsageError(message, { cause: error }) : new OutputError(message, { cause: error });
}

export function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}
