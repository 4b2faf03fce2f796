/** The token broker as a library: for the command, the tests and the benchmark. */
export {
  applicationPackageProblem,
  brokerConfigSchema,
  loadBrokerConfig,
  resolveBrokerConfig,
  type BrokerConfig,
  type PlatformCredentials,
} from './config.js';
export {
  buildBrokerApp,
  listen,
  startBroker,
  TOKEN_PATH,
  type BrokerApp,
  type BrokerDeps,
  type BrokerLogLevel,
  type RunningBroker,
  type StartBrokerOptions,
} from './server.js';
export { BrokerProblem, type ProblemDetails, type ProblemKind } from './problem.js';
export { TokenBroker, parseApplicationPackage, type BrokerToken, type CacheOutcome } from './token-broker.js';
export { AuthServerFailure, AuthServerTokenSource, type FetchedToken, type TokenSource } from './token-source.js';
export { MemoryTokenCache, RedisTokenCache, sharedCacheKey, type CachedToken, type SharedTokenCache } from './cache.js';
