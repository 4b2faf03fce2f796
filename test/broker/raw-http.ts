import { connect } from 'node:net';

/** An answer as read off the socket: the status, the headers (lower-case names, last one wins) and the body text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends one request exactly as written (HTTP clients normalize a target: `%2D`, an absolute form or a fragment would
 * never reach the server as spelled) and reads the answer until the server closes the connection.
 */
export function rawRequest(
  port: number,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  method = 'GET',
): Promise<RawAnswer> {
  const lines = [
    `${method} ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${target} within 5 s`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) {
        reject(new Error(`no HTTP answer to ${target}: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const [statusLine = '', ...headerLines] = text.slice(0, split).split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: text.slice(split + 4) });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
