import { createHmac } from 'node:crypto';

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** A signed JWT in compact form: base64url(header).base64url(claims).base64url(HMAC-SHA256 of the first two). */
export function signHs256(claims: Record<string, unknown>, key: string): string {
  const signingInput = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`;
  const signature = createHmac('sha256', key).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}
