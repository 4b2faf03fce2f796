import { connect, createServer, type Socket } from 'node:net';
import { listenOnLoopback } from './loopback.js';

/** A TCP path to a server that can freeze: forward nothing, close nothing, as a failover or a partition looks. */
export interface TcpProxy {
  /** The loopback port clients connect to. */
  readonly port: number;
  /** Connections the proxy has accepted so far. */
  connections(): number;
  /** From now on every byte either way is swallowed, old connections and new alike; no connection is closed. */
  freeze(): void;
  /**
   * Freezes a connection at the first bytes from its client that `sent` finds (swallowed too), that connection alone:
   * a path that fails at one exact step.
   */
  freezeWhen(sent: (bytes: Buffer) => boolean): void;
  /** Stops listening and closes every connection both ways. */
  close(): Promise<void>;
}

/** A proxy on 127.0.0.1 forwarding each connection to `target`, until frozen. */
export async function startTcpProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  const state: { frozen: boolean; accepted: number; trigger?: (bytes: Buffer) => boolean } = { frozen: false, accepted: 0 };
  const upstreams = new Set<Socket>();
  const server = createServer((client) => {
    state.accepted++;
    const upstream = connect(target.port, target.host);
    upstreams.add(upstream);
    const connection = { frozen: false };
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (from === client && state.trigger?.(chunk)) connection.frozen = true;
        if (!state.frozen && !connection.frozen) to.write(chunk);
      });
      from.on('close', () => to.destroy());
      from.on('error', () => to.destroy());
    };
    forward(client, upstream);
    forward(upstream, client);
    upstream.on('close', () => upstreams.delete(upstream));
  });
  const listening = await listenOnLoopback(server);
  return {
    port: listening.port,
    connections: () => state.accepted,
    freeze: () => {
      state.frozen = true;
    },
    freezeWhen: (sent) => {
      state.trigger = sent;
    },
    close: async () => {
      for (const upstream of upstreams) upstream.destroy();
      await listening.close();
    },
  };
}
