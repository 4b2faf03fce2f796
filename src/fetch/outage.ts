import { UnavailableError } from '../errors.js';
import { signalled, unlessAborted } from './clock.js';

/**
 * The run ends here: a unit used all its retries on network errors, timeouts or 5xx, and the next request failed the
 * same way. Exit 4, like any unreachable API; the units not fetched are not attempted (as after a rejected credential).
 */
export class VendorDownError extends UnavailableError {}

/** What an unreachable or failing server's error ends with; a caller that knows the server better says it instead. */
export const UNREACHABLE_HINT = 'check the URL or try again later';

/** One `send` of the client (a request and its retries), as the gate tells them apart. */
export type CallId = number;

type State =
  | { readonly kind: 'answering' }
  /** `probe`: the one call that may send; `gaveUp`: the failure a call used its retries on, if one has. */
  | { readonly kind: 'failing'; readonly probe: CallId | undefined; readonly gaveUp?: string }
  | { readonly kind: 'down'; readonly error: VendorDownError };

/**
 * Whether the vendor answers, for every request of a run. While it answers, the gate costs nothing. Once a request
 * fails on the network, times out or gets a 5xx, one call at a time probes the vendor with its retries while the
 * others wait (so a dead URL costs one unit's retries, not every unit's); the first answer opens the gate again.
 * When the probing call has used its retries, the next call probes; if its request fails the same way, the vendor
 * is down and every call ends with the VendorDownError. A request that times out is slower evidence than a refused
 * connection (each costs `--timeout`), so two in a row decide: one sent after a timeout that times out too.
 */
export class OutageGate {
  private state: State = { kind: 'answering' };
  private lastCall = 0;
  private changed = signalled();
  /** When the latest timeout since the last answer came, and what it was. */
  private timedOut: { readonly at: number; readonly reason: string } | undefined;

  join(): CallId {
    return ++this.lastCall;
  }

  /** Before each request of `call`: at once while the vendor answers; while it fails, when it is this call's turn. */
  async admit(call: CallId, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const state = this.state;
      if (state.kind === 'answering') return;
      if (state.kind === 'down') throw state.error;
      if (state.probe === call) return;
      if (state.probe === undefined) {
        this.set({ ...state, probe: call });
        return;
      }
      await unlessAborted(this.changed.promise, signal);
    }
  }

  /** The vendor answered a request (any answer but a 5xx): it is up. */
  answered(): void {
    this.timedOut = undefined;
    if (this.state.kind === 'failing') this.set({ kind: 'answering' });
  }

  /** The vendor is down for this run, for a reason of the caller's (`error`): every call ends with it. */
  end(error: VendorDownError): void {
    if (this.state.kind !== 'down') this.set({ kind: 'down', error });
  }

  /**
   * A request of `call` failed on the network, timed out or got a 5xx (`reason`). Returns the error that ends the run
   * when it was the probe sent after another call had used its retries.
   */
  failed(call: CallId, reason: string, timeout?: { readonly sentAt: number; readonly at: number }): VendorDownError | undefined {
    const state = this.state;
    if (state.kind === 'down') return state.error;
    if (timeout) {
      const previous = this.timedOut;
      if (previous !== undefined && timeout.sentAt > previous.at) {
        const error = new VendorDownError(
          `the API accepts connections but does not answer: ${previous.reason}, and the next request too (${reason}); ${UNREACHABLE_HINT}`,
        );
        this.set({ kind: 'down', error });
        return error;
      }
      this.timedOut ??= { at: timeout.at, reason };
    }
    if (state.kind === 'answering') this.set({ kind: 'failing', probe: call });
    if (state.kind !== 'failing' || state.gaveUp === undefined || state.probe !== call) return undefined;
    const error = new VendorDownError(
      `the API is unreachable or failing: ${state.gaveUp}, and the next request failed the same way (${reason}); ${UNREACHABLE_HINT}`,
    );
    this.set({ kind: 'down', error });
    return error;
  }

  /** `call` used all its retries (`what`: which request, how many attempts): the next call probes, and decides. */
  gaveUp(call: CallId, what: string): void {
    const state = this.state;
    if (state.kind === 'failing' && (state.probe === call || state.probe === undefined))
      this.set({ kind: 'failing', probe: undefined, gaveUp: what });
  }

  /** `call` is over (answered, failed or aborted): if it was probing, the next call takes its turn. */
  leave(call: CallId): void {
    const state = this.state;
    if (state.kind === 'failing' && state.probe === call) this.set({ ...state, probe: undefined });
  }

  private set(state: State): void {
    this.state = state;
    this.changed.resolve();
    this.changed = signalled();
  }
}
