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
