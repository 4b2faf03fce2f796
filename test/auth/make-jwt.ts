/** An unsigned-looking JWT for tests: base64url JSON header and claims, and a dummy signature. */
export function makeJwt(claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${encode(header)}.${encode(claims)}.c2lnbmF0dXJl`;
}
