import type { AddressInfo, Server, Socket } from 'node:net';

/** A test server listening on loopback. */
export interface Listening {
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Ends every open connection (keep-alive ones included) without stopping the server. */
  readonly dropConnections: () => void;
  /** Stops listening and ends every open connection, so a client's keep-alive socket cannot hold the close. */
  readonly close: () => Promise<void>;
}

/** Listens on 127.0.0.1 at a free port, keeping the connections so that they can be ended. */
export async function listenOnLoopback(server: Server): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dropConnections = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    dropConnections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        dropConnections();
      }),
  };
}
