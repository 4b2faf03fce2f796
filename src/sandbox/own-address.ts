import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopback } from './http.js';

/** `name:port` as a Host header or an origin writes it: an IPv6 address in brackets. */
function hostPort(name: string, port: number): string {
  const bracketed = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
  return `${bracketed}:${port}`;
}

/**
 * The address the sandbox listens on, known once it listens: its base URL and the names a client on this machine
 * reaches it by (`127.0.0.1`, `localhost`, `[::1]`, the `--host` given and the address it resolved to). The admin
 * routes answer a request only from a loopback client, addressed to one of these names (its `Host`), and not sent
 * by a web page of another origin (its `Origin`, when it has one): a page open in a browser on this machine can send
 * a POST to the sandbox, and DNS rebinding can make its own name point here, but neither can forge these headers.
 */
export class OwnAddress {
  private state: { readonly baseUrl: string; readonly hosts: ReadonlySet<string> } = { baseUrl: '', hosts: new Set() };

  /** Called once the server listens on `host` (as given) at `address`. */
  settle(host: string, address: AddressInfo): void {
    const names = ['127.0.0.1', 'localhost', '::1', host, address.address];
    const hosts = new Set(names.map((name) => hostPort(name, address.port).toLowerCase()));
    // A client leaves out port 80, the default of http.
    if (address.port === 80) for (const name of names) hosts.add(hostPort(name, 80).replace(/:80$/, '').toLowerCase());
    // A name that resolved to IPv6 (`localhost` on some machines) is shown as the address.
    const shown = address.family === 'IPv6' || host.includes(':') ? address.address : host;
    this.state = { baseUrl: `http://${hostPort(shown, address.port)}`, hosts };
  }

  /** `http://host:port`, e.g. `http://127.0.0.1:45678`. */
  get baseUrl(): string {
    return this.state.baseUrl;
  }

  /** Why an admin request is refused (the 403's detail), or undefined when it is answered. */
  adminRefusal(request: IncomingMessage): string | undefined {
    if (!isLoopback(request.socket.remoteAddress)) return 'The sandbox admin endpoints answer loopback clients only.';
    const { hosts } = this.state;
    const host = request.headers.host?.toLowerCase();
    if (host === undefined || !hosts.has(host)) {
      return `The sandbox admin endpoints answer requests addressed to the sandbox itself only (Host ${[...hosts].join(', ')}).`;
    }
    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined && !(origin.startsWith('http://') && hosts.has(origin.slice('http://'.length)))) {
      return 'The sandbox admin endpoints refuse requests sent by a web page of another origin.';
    }
    return undefined;
  }
}
