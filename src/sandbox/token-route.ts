import { randomUUID } from 'node:crypto';
import { hits } from './faults.js';
import { formDecode, HttpAnswer, parseBasic, readBody, safeEqual, type Reply } from './http.js';
import { signHs256 } from './jwt.js';
import type { Call, SandboxContext } from './routing.js';

const TOKEN_AUDIENCE = 'area-metrics';
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="area-metrics"', ...NO_STORE };

/** `POST /oauth2/token`: the client-credentials grant, answering a signed JWT. */
export async function tokenRoute({ request, record }: Call, context: SandboxContext): Promise<Reply> {
  const { state, settings } = context;
  state.tokenCalls += 1;
  state.tokenOrdinal += 1;
  const ordinal = state.tokenOrdinal;
  const active = state.faults;
  const text = await readBody(request);
  if (active.tokenLatencyMs) await state.delay(active.tokenLatencyMs);
  if (hits(active.tokenFailNth, ordinal)) {
    const status = active.tokenFailNth!.status;
    throw new HttpAnswer(status, {
      error: status >= 500 ? 'server_error' : 'invalid_request',
      error_description: `Injected failure (sandbox tokenFailNth, request ${ordinal}).`,
    });
  }
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/x-www-form-urlencoded') {
    throw new HttpAnswer(
      400,
      { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded.' },
      NO_STORE,
    );
  }
  const form = new URLSearchParams(text);
  const basic = parseBasic(request.headers.authorization);
  // Basic credentials count as sent raw (what area-metrics and most clients do) or form-encoded first (what the
  // OAuth 2.0 specification asks for): a secret with '+' or '%' must work either way.
  const candidates: [string, string][] = basic
    ? [basic, [formDecode(basic[0]), formDecode(basic[1])]]
    : form.has('client_id') && form.has('client_secret')
      ? [[form.get('client_id')!, form.get('client_secret')!]]
      : [];
  if (candidates.length === 0) {
    throw new HttpAnswer(401, { error: 'invalid_client', error_description: 'Client authentication is required.' }, CHALLENGE);
  }
  const matches = ([id, secret]: [string, string]): boolean => safeEqual(id, settings.clientId) && safeEqual(secret, settings.clientSecret);
  if (!candidates.some(matches)) {
    throw new HttpAnswer(401, { error: 'invalid_client', error_description: 'Client authentication failed.' }, CHALLENGE);
  }
  record.authorized = true;
  const grantType = form.get('grant_type');
  if (grantType === null || grantType === '') {
    throw new HttpAnswer(400, { error: 'invalid_request', error_description: 'grant_type is required.' }, NO_STORE);
  }
  if (grantType !== 'client_credentials') {
    throw new HttpAnswer(400, { error: 'unsupported_grant_type', error_description: 'Only client_credentials is supported.' }, NO_STORE);
  }
  const scope = form.get('scope') ?? '';
  // Tokens use the real clock: the clients that check them do.
  const issuedAt = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: context.address.baseUrl,
    sub: settings.clientId,
    aud: TOKEN_AUDIENCE,
    iat: issuedAt,
    exp: issuedAt + settings.tokenTtlSeconds,
    jti: randomUUID(),
  };
  if (scope !== '') claims.scope = scope;
  const answer: Record<string, unknown> = {
    access_token: signHs256(claims, settings.tokenSigningKey),
    expires_in: settings.tokenTtlSeconds,
    token_type: 'Bearer',
  };
  if (scope !== '') answer.scope = scope;
  return { status: 200, body: JSON.stringify(answer), headers: NO_STORE };
}
