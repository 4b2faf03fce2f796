export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** `Authorization: Basic base64(client_id:client_secret)` (RFC 7617), as the vendor's API and auth server expect. */
export function basicAuthorization(credentials: ClientCredentials): string {
  return `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`, 'utf8').toString('base64')}`;
}
