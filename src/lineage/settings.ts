import { UsageError } from '../errors.js';
import { parseHttpUrl } from '../http-url.js';

/** Where and as whom a run posts its OpenLineage events. */
export interface LineageSettings {
  /** `<url>/api/v1/lineage`, or `<url>/<OPENLINEAGE_ENDPOINT>`. */
  readonly endpoint: URL;
  /** Sent as `Authorization: Bearer <key>`; never logged. */
  readonly apiKey?: string;
  /** The jobs' namespace. */
  readonly namespace: string;
}

export const DEFAULT_LINEAGE_NAMESPACE = 'area-metrics';
const DEFAULT_ENDPOINT = 'api/v1/lineage';

/** `--openlineage-url` (or `OPENLINEAGE_URL`) checked: http(s), with no credentials in it, a bare root. */
export function parseLineageUrl(value: string, source: string): URL {
  return parseHttpUrl(value, source, {
    example: 'http://marquez.example.com:5000',
    credentialsBelong: 'put the API key in OPENLINEAGE_API_KEY',
    root: true,
  });
}

/** The OpenLineage clients' environment variables, as read (empty ones unset). */
export interface LineageEnvironment {
  /** `OPENLINEAGE_ENDPOINT`: the path under the URL (default `api/v1/lineage`). */
  readonly endpoint?: string | undefined;
  /** `OPENLINEAGE_API_KEY`. */
  readonly apiKey?: string | undefined;
  /** `OPENLINEAGE_NAMESPACE` (default `area-metrics`). */
  readonly namespace?: string | undefined;
  /** `OPENLINEAGE_DISABLED`: `true` turns lineage off whatever the URL. */
  readonly disabled?: string | undefined;
}

/** The variables `resolveLineageSettings` reads, as the OpenLineage clients name them. */
export const LINEAGE_ENV = {
  endpoint: 'OPENLINEAGE_ENDPOINT',
  apiKey: 'OPENLINEAGE_API_KEY',
  namespace: 'OPENLINEAGE_NAMESPACE',
  disabled: 'OPENLINEAGE_DISABLED',
} as const;

/**
 * The lineage settings as the OpenLineage clients read their environment: the URL (here also a flag), the endpoint
 * path joined under the URL's path, the API key as a Bearer token, the namespace. Undefined when no URL is set or
 * lineage is disabled.
 */
export function resolveLineageSettings(url: URL | undefined, env: LineageEnvironment): LineageSettings | undefined {
  if (url === undefined || env.disabled?.trim().toLowerCase() === 'true') return undefined;
  const path = (env.endpoint ?? DEFAULT_ENDPOINT).replace(/^\/+/, '');
  const endpoint = new URL(path, url.href.endsWith('/') ? url.href : `${url.href}/`);
  if (endpoint.origin !== url.origin)
    throw new UsageError(`${LINEAGE_ENV.endpoint} must be a path under the OpenLineage URL, not another host`);
  return { endpoint, namespace: env.namespace ?? DEFAULT_LINEAGE_NAMESPACE, ...(env.apiKey === undefined ? {} : { apiKey: env.apiKey }) };
}
