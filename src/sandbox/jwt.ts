import { createHmac } from 'node:crypto';

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** A compact HS256 JWS (RFC 7515/7519) over the given claims. */
export function signHs256(claims: Record<string, unknown>, key: string): string {
  const signingInput = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`;
  const signature = createHmac('sha256', key).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}
