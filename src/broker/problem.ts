/**
 * RFC 9457 problem details. `type` is a URN of ours (stable, machine-readable; RFC 9457 allows non-dereferenceable
 * URIs), `title` is the same for every occurrence of a type, `detail` explains this occurrence.
 */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
}

export type ProblemKind =
  | 'missing-application-package'
  | 'invalid-application-package'
  | 'unknown-application'
  | 'credentials-not-configured'
  | 'auth-server-rejected'
  | 'auth-server-invalid-response'
  | 'auth-server-unavailable'
  | 'malformed-url'
  | 'not-found'
  | 'method-not-allowed'
  | 'too-many-requests'
  | 'overloaded'
  | 'attestation-missing'
  | 'attestation-invalid'
  | 'attestation-other-app'
  | 'attestation-replayed'
  | 'attestation-unavailable'
  | 'internal-error';

const PROBLEMS: Record<ProblemKind, { status: number; title: string }> = {
  'missing-application-package': { status: 400, title: 'application_package is missing' },
  'invalid-application-package': { status: 400, title: 'application_package is malformed' },
  'unknown-application': { status: 400, title: 'Unknown application' },
  'credentials-not-configured': { status: 401, title: 'Credentials for the application are not configured' },
  'auth-server-rejected': { status: 502, title: 'The auth server rejected the token request' },
  'auth-server-invalid-response': { status: 502, title: 'The auth server answered with something that is not a token' },
  'auth-server-unavailable': { status: 503, title: 'The auth server is unavailable' },
  'malformed-url': { status: 400, title: 'The URL is malformed' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  overloaded: { status: 503, title: 'The broker is overloaded' },
  'attestation-missing': { status: 401, title: 'The app attestation is missing' },
  'attestation-invalid': { status: 401, title: 'The app attestation is not genuine' },
  'attestation-other-app': { status: 403, title: 'The app attestation is for another application' },
  'attestation-replayed': { status: 403, title: 'The app attestation was used before' },
  'attestation-unavailable': { status: 503, title: 'The app attestation cannot be checked now' },
  'internal-error': { status: 500, title: 'Internal error' },
};

/** Seconds a client should wait after a 503 before asking again, when nothing better is known. */
export const RETRY_AFTER_SECONDS = 5;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** A request the broker answers with a problem; thrown by the core, rendered by the server. */
export class BrokerProblem extends Error {
  readonly status: number;

  /**
   * @param detail shown to the client app: never the auth URL, client id or secret (they stay server-side: a client app is not trusted with them)
   * @param internalReason logged only: e.g. the auth server's own error, which names its URL
   * @param retryAfterSeconds a 503's Retry-After; default RETRY_AFTER_SECONDS
   */
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly internalReason?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = 'BrokerProblem';
    this.status = PROBLEMS[kind].status;
  }

  toJSON(): ProblemDetails {
    return {
      type: `urn:area-metrics:broker:problem:${this.kind}`,
      title: PROBLEMS[this.kind].title,
      status: this.status,
      detail: this.detail,
    };
  }
}
