import { switchOption, text, valueOption, type OptionValues } from './options.js';
import { CREDENTIAL_OPTIONS, requestBudgetOptions } from './shared-options.js';

export const TOKEN_OPTIONS = {
  authUrl: valueOption({
    flags: '--auth-url <url>',
    env: 'AREA_METRICS_AUTH_URL',
    parse: text,
    description: 'auth server root; POSTs to {url}/oauth2/token',
  }),
  ...CREDENTIAL_OPTIONS,
  scope: valueOption({ flags: '--scope <scope>', parse: text, description: 'scope to request (sent only when given)' }),
  broker: valueOption({
    flags: '--broker <client_server_url>',
    parse: text,
    description: "ask this token broker's /api/gatekeeper-token instead (needs --app)",
  }),
  app: valueOption({ flags: '--app <application_package>', parse: text, description: 'the application package to ask the broker for' }),
  attestationToken: valueOption({
    flags: '--attestation-token <token>',
    env: 'AREA_METRICS_ATTESTATION_TOKEN',
    parse: text,
    description: 'an App Check (or other attestation) token to send the broker, for debugging; prefer the env var',
  }),
  attestationHeader: valueOption({
    flags: '--attestation-header <name>',
    parse: text,
    default: 'X-Firebase-AppCheck',
    description: 'the header the broker reads the attestation token from',
  }),
  raw: switchOption({ flags: '--raw', description: 'print only the token on stdout' }),
  json: switchOption({ flags: '--json', description: "print the server's JSON plus decoded header and claims on stdout" }),
  ...requestBudgetOptions({ timeoutSeconds: 30, retries: 0, maxRetries: 10 }),
  verbose: switchOption({ flags: '-v, --verbose', description: 'say where each setting came from and what is sent (never the secret)' }),
};

export type TokenOptions = OptionValues<typeof TOKEN_OPTIONS>;

export const TOKEN_HELP = `
Examples:
  $ area-metrics token --auth-url https://auth.vendor.example --client-id acme-retail --client-secret-file /etc/area-metrics/secret
  $ AREA_METRICS_AUTH_URL=https://auth.vendor.example AREA_METRICS_CLIENT_ID=acme-retail \\
      AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics token --json | jq .claims
  $ export TOKEN=$(area-metrics token --raw)
  $ area-metrics token --broker https://backend.example.com --app com.acme.shop
  $ AREA_METRICS_ATTESTATION_TOKEN=... area-metrics token --broker https://backend.example.com --app com.acme.shop

Exit codes: 0 token shown, 2 usage, 3 credentials or application refused, 4 server unreachable or failing,
5 a 200 answer without a usable access_token.
The JWT signature is never verified: this command is for looking, not for trusting.
`;
