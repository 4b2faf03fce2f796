import { z } from 'zod';
import { AuthError, ContractError } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import type { Transport } from '../fetch/http-client.js';
import { describeRequest, type HttpResponse } from '../fetch/exchange.js';
import { parseHttpUrl } from '../http-url.js';
import { createRedactor, type Redactor } from '../redact.js';
import { decodeJwt, numericDateClaim } from './jwt.js';

/**
 * An OAuth 2.0 token response (RFC 6749 5.1), loose so that extra fields (`scope`, vendor fields) survive for
 * display. `expires_in` is a non-negative integer; some servers send it as a numeric string, which is accepted.
 */
export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z
    .union([
      z.number().int().nonnegative(),
      z
        .string()
        .regex(/^\d+$/, 'expected a non-negative integer')
        .transform((value) => Number(value)),
    ])
    .optional(),
  token_type: z.string().optional(),
  scope: z.string().optional(),
});

export type TokenResponse = z.infer<typeof tokenResponseSchema>;

/** An OAuth error body (RFC 6749 5.2); both fields optional because servers vary. */
const oauthErrorSchema = z.looseObject({
  error: z.string().optional(),
  error_description: z.string().optional(),
});

export interface ClientCredentialsRequest {
  authUrl: string;
  credentials: ClientCredentials;
  scope?: string;
}

/** The auth server's 400/401/403: the credentials (or scope) were refused. Exit 3 like every AuthError. */
export class TokenRequestRejectedError extends AuthError {
  constructor(
    message: string,
    readonly status: number,
    readonly oauthError?: string,
    readonly oauthErrorDescription?: string,
  ) {
    super(message);
  }
}

const TOKEN_PATH = '/oauth2/token';
const REJECTION_STATUSES = new Set([400, 401, 403]);

/** `{auth_url}/oauth2/token`, with or without a trailing slash, and not doubled when auth_url already ends in it. */
export function tokenEndpointUrl(authUrl: string): URL {
  const url = parseHttpUrl(authUrl, 'the auth URL', {
    example: 'https://auth.example.com',
    credentialsBelong: 'use --client-id and --client-secret',
  });
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith(TOKEN_PATH) ? path : `${path}${TOKEN_PATH}`;
  return url;
}

/** One line, bounded, and without the secret in any spelling (e.g. the Basic header) even if a server echoes it back. */
function sanitize(text: string, redact: Redactor): string {
  return redact(text.replace(/\s+/g, ' ').trim()).slice(0, 300);
}

function parseJsonBody(response: HttpResponse): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    return undefined;
  }
}

/** Names the failing fields (never their values: the body may hold a token). */
export function describeZodIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(body)'}: ${issue.message}`).join('; ');
}

/**
 * Reads a 2xx token body (from an auth server or a broker). Throws ContractError when it is not JSON or has no
 * usable access_token; the message says which, never what the body contained.
 */
export function parseTokenBody(response: HttpResponse, where: string): TokenResponse {
  const json = parseJsonBody(response);
  if (json === undefined) {
    const type = response.headers.get('content-type') ?? 'no content type';
    throw new ContractError(`${where}: HTTP ${response.status} body is not JSON (${type})`);
  }
  const parsed = tokenResponseSchema.safeParse(json);
  if (!parsed.success) {
    throw new ContractError(`${where}: HTTP ${response.status} is not a token response: ${describeZodIssues(parsed.error)}`);
  }
  return parsed.data;
}

type Outcome = { kind: 'token'; token: TokenResponse } | { kind: 'rejected'; error: TokenRequestRejectedError };

/**
 * The OAuth 2.0 client-credentials grant (RFC 6749 4.4) with HTTP Basic client authentication. Retries follow the
 * HttpClient's policy, which the caller chooses. Throws TokenRequestRejectedError (an AuthError) for 400/401/403,
 * UnavailableError for network failures, timeouts, 5xx and other statuses, ContractError for an unusable 2xx.
 */
export async function requestClientCredentialsToken(http: Transport, request: ClientCredentialsRequest): Promise<TokenResponse> {
  const url = tokenEndpointUrl(request.authUrl);
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (request.scope !== undefined && request.scope !== '') form.set('scope', request.scope);
  const where = describeRequest({ method: 'POST', url });
  const redact = createRedactor([{ clientId: request.credentials.clientId, secret: request.credentials.clientSecret }]);

  const outcome = await http.send<Outcome>(
    {
      method: 'POST',
      url,
      headers: {
        Authorization: basicAuthorization(request.credentials),
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
      },
      body: form.toString(),
      acceptStatus: (status) => REJECTION_STATUSES.has(status),
    },
    (response) => {
      if (REJECTION_STATUSES.has(response.status)) {
        return { kind: 'rejected', error: rejection(response, where, redact) };
      }
      return { kind: 'token', token: parseTokenBody(response, where) };
    },
  );
  if (outcome.kind === 'rejected') throw outcome.error;
  return outcome.token;
}

function rejection(response: HttpResponse, where: string, redact: Redactor): TokenRequestRejectedError {
  const parsed = oauthErrorSchema.safeParse(parseJsonBody(response));
  const code = parsed.success && parsed.data.error ? sanitize(parsed.data.error, redact) : undefined;
  const description = parsed.success && parsed.data.error_description ? sanitize(parsed.data.error_description, redact) : undefined;
  const reason = code ? `${code}${description ? ` (${description})` : ''}` : `HTTP ${response.status} without an OAuth error body`;
  const hint = response.status === 400 && code === 'invalid_scope' ? 'check --scope' : 'check the auth URL, client id and client secret';
  return new TokenRequestRejectedError(
    `auth server rejected the client: ${reason} [HTTP ${response.status} from ${where}]; ${hint}`,
    response.status,
    code,
    description,
  );
}

export interface TokenLifetime {
  expiresAt?: Date;
  source: 'expires_in' | 'exp' | 'none';
}

/**
 * When the token stops being valid: the earlier of `requestSentAt + expires_in` and the JWT `exp` claim.
 * Counting from when the request was sent, not received, errs on the safe side of network latency.
 */
export function tokenLifetime(token: TokenResponse, requestSentAt: Date): TokenLifetime {
  const fromExpiresIn = token.expires_in !== undefined ? new Date(requestSentAt.getTime() + token.expires_in * 1000) : undefined;
  const decoded = decodeJwt(token.access_token);
  const fromExp = decoded ? numericDateClaim(decoded.claims, 'exp') : undefined;
  if (fromExpiresIn && fromExp) {
    return fromExp.getTime() < fromExpiresIn.getTime()
      ? { expiresAt: fromExp, source: 'exp' }
      : { expiresAt: fromExpiresIn, source: 'expires_in' };
  }
  if (fromExpiresIn) return { expiresAt: fromExpiresIn, source: 'expires_in' };
  if (fromExp) return { expiresAt: fromExp, source: 'exp' };
  return { source: 'none' };
}
