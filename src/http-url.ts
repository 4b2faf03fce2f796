import { UsageError } from './errors.js';

/** How an option's URL is checked beyond http(s): the words of its messages, and whether it is a bare root. */
export interface HttpUrlRules {
  /** A URL like the one expected, for the message when the text is no URL at all. */
  readonly example: string;
  /** Where credentials belong instead, for the message when the URL holds some. */
  readonly credentialsBelong: string;
  /** A root the tool appends its own paths and queries to: a query or fragment is refused (else a fragment is dropped). */
  readonly root?: boolean;
}

/**
 * A user-given http(s) URL, checked the same way for every option that takes one. No message repeats the text: a
 * URL that holds credentials holds a password.
 */
export function parseHttpUrl(value: string, source: string, rules: HttpUrlRules): URL {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`${source} is not a URL; use e.g. ${rules.example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${source} must be http or https, not ${url.protocol.replace(':', '')}`);
  // fetch refuses URLs with userinfo, and credentials in a URL would end up in logs.
  if (url.username !== '' || url.password !== '')
    throw new UsageError(`${source} must not contain credentials; ${rules.credentialsBelong}`);
  if (rules.root && (url.search !== '' || url.hash !== '')) throw new UsageError(`${source} must not have a query or fragment`);
  url.hash = '';
  return url;
}
