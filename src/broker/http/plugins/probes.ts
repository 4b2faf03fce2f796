import type { AttestationGate } from '../../attestation/gate.js';
import type { SharedTokenCache } from '../../token/cache.js';
import type { DrainState } from '../request-contract.js';
import type { TokenBroker } from '../../token/token-broker.js';
import { appWide } from './plugin.js';

export interface ProbesOptions {
  readonly broker: TokenBroker;
  readonly shared: SharedTokenCache | undefined;
  readonly drain: DrainState;
  readonly attestation: AttestationGate | undefined;
  /** The metrics text; undefined when /metrics is served on a port of its own (`server.metricsPort`). */
  readonly metricsText: (() => Promise<{ contentType: string; text: string }>) | undefined;
}

/** `/healthz`, `/readyz` and `/metrics`: never limited, and logged at debug. */
export const probes = appWide<ProbesOptions>((app, { broker, shared, drain, attestation, metricsText }, done) => {
  app.get('/healthz', async (request, reply) => {
    request.probe = true;
    return reply.header('cache-control', 'no-store').send({ status: 'ok' });
  });

  // Ready while the instance can hand out tokens. Without Redis it still can (from memory and the auth server), and a
  // platform's state is the same on every instance, so neither takes every instance out of the load balancer at
  // once: the body says what is wrong. Draining is one reason to answer 503; enforced attestation without the
  // issuer's keys is the other (every token request would be refused, until the keys are fetched).
  app.get('/readyz', async (request, reply) => {
    request.probe = true;
    reply.header('cache-control', 'no-store');
    const platforms = Object.fromEntries(broker.platformStates());
    const attested = attestation === undefined ? {} : { attestation: attestation.status() };
    if (drain.draining) return reply.code(503).send({ status: 'stopping', platforms, ...attested });
    if (attestation?.enforced === true && !attestation.hasKeys)
      return reply.code(503).send({ status: 'no-attestation-keys', platforms, ...attested });
    if (shared === undefined) return reply.send({ status: 'ready', config: 'loaded', cache: 'memory', platforms, ...attested });
    return shared.status() === 'up'
      ? reply.send({ status: 'ready', config: 'loaded', cache: 'redis', redis: 'up', platforms, ...attested })
      : reply.send({ status: 'degraded', config: 'loaded', cache: 'memory', redis: 'down', platforms, ...attested });
  });

  if (metricsText !== undefined) {
    app.get('/metrics', async (request, reply) => {
      request.probe = true;
      const { contentType, text } = await metricsText();
      return reply.header('cache-control', 'no-store').header('content-type', contentType).send(text);
    });
  }
  done();
});
