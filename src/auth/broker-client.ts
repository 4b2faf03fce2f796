import { z } from 'zod';
import { AuthError } from '../errors.js';
import { cutAtSpace } from '../redact.js';
import type { HttpClient } from '../fetch/http-client.js';
import { describeRequest, type HttpResponse } from '../fetch/exchange.js';
import { parseHttpUrl } from '../http-url.js';
import { parseTokenBody, type TokenResponse } from './client-credentials.js';

const BROKER_PATH = '/api/gatekeeper-token';
const REJECTION_STATUSES = new Set([400, 401, 403]);

/** RFC 9457 problem details; every member optional because a broker in front of ours may answer otherwise. */
const problemSchema = z.looseObject({
  type: z.string().optional(),
  title: z.string().optional(),
  status: z.number().optional(),
  detail: z.string().optional(),
});

export interface BrokerTokenRequest {
  brokerUrl: string;
  applicationPackage: string;
  /** An attestation token (App Check) and the header it goes in. */
  attestation?: { readonly header: string; readonly token: string };
}

/**
 * The broker refused the application (400 unknown/malformed package, 401 no usable credentials or attestation, 403
 * an attestation of another application or used before). Exit 3.
 */
export class BrokerRejectedError extends AuthError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** `{client_server_url}/api/gatekeeper-token?application_package=X`; not doubled when the URL already ends in it. */
export function brokerTokenUrl(brokerUrl: string, applicationPackage: string): URL {
  const url = parseHttpUrl(brokerUrl, 'the broker URL', {
    example: 'https://backend.example.com',
    credentialsBelong: 'the broker holds the credentials',
  });
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith(BROKER_PATH) ? path : `${path}${BROKER_PATH}`;
  url.search = new URLSearchParams({ application_package: applicationPackage }).toString();
  return url;
}

/** A short single line from a problem+json body: "title: detail", whichever exist. */
export function problemSummary(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = problemSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const parts = [parsed.data.title, parsed.data.detail].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? cutAtSpace(parts.join(': ').replace(/\s+/g, ' ').trim(), 300) : undefined;
}

type Outcome = { kind: 'token'; token: TokenResponse } | { kind: 'rejected'; error: BrokerRejectedError };

/**
 * Asks a token broker (`GET /api/gatekeeper-token`) for the application's token. 400/401/403 throw BrokerRejectedError (an
 * AuthError); 5xx, network and timeouts throw UnavailableError (the HttpClient's message carries the status and
 * the problem `detail`); a 200 without a usable access_token throws ContractError.
 */
export async function requestBrokerToken(http: HttpClient, request: BrokerTokenRequest): Promise<TokenResponse> {
  const url = brokerTokenUrl(request.brokerUrl, request.applicationPackage);
  const where = `${describeRequest({ method: 'GET', url })} for ${JSON.stringify(request.applicationPackage)}`;
  const outcome = await http.send<Outcome>(
    {
      method: 'GET',
      url,
      headers: {
        Accept: 'application/json',
        ...(request.attestation !== undefined ? { [request.attestation.header]: request.attestation.token } : {}),
      },
      acceptStatus: (status) => REJECTION_STATUSES.has(status),
    },
    (response: HttpResponse) => {
      if (REJECTION_STATUSES.has(response.status)) {
        const summary = problemSummary(response.text) ?? 'no problem details in the body';
        return {
          kind: 'rejected',
          error: new BrokerRejectedError(
            `broker refused the request: HTTP ${response.status} (${summary}) [${where}]; check --app and the broker's configuration`,
            response.status,
          ),
        };
      }
      return { kind: 'token', token: parseTokenBody(response, where) };
    },
  );
  if (outcome.kind === 'rejected') throw outcome.error;
  return outcome.token;
}
