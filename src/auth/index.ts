export { decodeJwt, numericDateClaim, type DecodedJwt } from './jwt.js';
export {
  describeZodIssues,
  parseHttpUrl,
  parseTokenBody,
  requestClientCredentialsToken,
  tokenEndpointUrl,
  tokenLifetime,
  tokenResponseSchema,
  TokenRequestRejectedError,
  type ClientCredentialsRequest,
  type TokenLifetime,
  type TokenResponse,
} from './client-credentials.js';
export {
  brokerTokenUrl,
  problemSummary,
  requestBrokerToken,
  BrokerRejectedError,
  type BrokerTokenRequest,
} from './broker-client.js';
export { readSecretFile } from './secret-file.js';
export {
  describeToken,
  formatHuman,
  formatJson,
  formatRaw,
  DISAGREEMENT_SECONDS,
  SHORT_LIFETIME_SECONDS,
  type TokenOrigin,
  type TokenReport,
} from './token-report.js';
