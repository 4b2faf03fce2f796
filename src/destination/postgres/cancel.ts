import { connect, type Socket } from 'node:net';

/** The protocol's CancelRequest code (1234 in the high 16 bits, 5678 in the low). */
const CANCEL_REQUEST_CODE = 80_877_102;

/** How long a cancel request may take to be delivered before it is given up. */
const CANCEL_MS = 2000;

/** What identifies a session to the server for a cancel request: its backend's pid and secret key. */
export interface BackendKey {
  readonly processID: number;
  readonly secretKey: number;
}

/**
 * Asks the server, on a connection of its own, to cancel the statement the session `key` runs, as libpq's
 * `PQcancel` does. A statement waiting on a lock never reads its own connection, so closing that one alone would
 * not end it. Best effort: resolves once sent, refused or timed out, never rejects.
 */
export function requestCancel(server: { readonly host: string; readonly port: number }, key: BackendKey): Promise<void> {
  return new Promise((resolve) => {
    // A unix socket's folder, as libpq names the socket in it.
    const socket: Socket = server.host.startsWith('/')
      ? connect(`${server.host}/.s.PGSQL.${server.port}`)
      : connect(server.port, server.host);
    const done = (): void => {
      socket.destroy();
      resolve();
    };
    socket.setTimeout(CANCEL_MS, done);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('connect', () => {
      const packet = Buffer.alloc(16);
      packet.writeInt32BE(16, 0);
      packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
      packet.writeInt32BE(key.processID, 8);
      packet.writeInt32BE(key.secretKey, 12);
      // The server reads it and closes the connection without an answer.
      socket.end(packet);
    });
  });
}
