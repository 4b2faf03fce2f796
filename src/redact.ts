/**
 * One redaction for every log line and every error text, importer and broker alike. A secret can reach text in
 * several spellings: raw, JSON-escaped (a JSON log line), URL-encoded (a form body or query string echoed back), and
 * inside the Base64 of `client_id:secret` (an Authorization header echoed by a gateway). Each spelling is replaced by
 * `***`.
 */
export interface Credential {
  readonly clientId?: string;
  readonly secret: string;
}

/** Shorter "secrets" would shred ordinary words; they are still never logged on purpose. */
const MIN_SECRET_LENGTH = 4;

const MASK = '***';

/** Every spelling of one credential that must never be written. */
export function secretSpellings(credential: Credential): string[] {
  const { clientId, secret } = credential;
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const jsonEscaped = JSON.stringify(secret).slice(1, -1);
  const urlEncoded = encodeURIComponent(secret);
  const formEncoded = new URLSearchParams({ s: secret }).toString().slice(2);
  const spellings = [secret, jsonEscaped, urlEncoded, formEncoded];
  if (clientId !== undefined) {
    for (const pair of [`${clientId}:${secret}`, `${clientId}:${urlEncoded}`, `${encodeURIComponent(clientId)}:${urlEncoded}`]) {
      spellings.push(Buffer.from(pair, 'utf8').toString('base64'));
    }
  }
  // Longest first, so a spelling that contains another is replaced whole.
  return [...new Set(spellings)].sort((a, b) => b.length - a.length);
}

export type Redactor = (text: string) => string;

/** A function that replaces every spelling of every credential given; the identity when there is none. */
export function createRedactor(credentials: readonly Credential[]): Redactor {
  const spellings = [...new Set(credentials.flatMap(secretSpellings))].sort((a, b) => b.length - a.length);
  if (spellings.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const spelling of spellings) {
      if (out.includes(spelling)) out = out.split(spelling).join(MASK);
    }
    return out;
  };
}

/**
 * `text` cut to at most `max` characters, at a space and marked with `…`. A secret quoted in a server's answer then
 * stays whole (and is masked) or goes whole: cut in the middle, its first part would no longer be recognised as it.
 */
export function cutAtSpace(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  return `${space > 0 ? text.slice(0, space) : ''}…`;
}
