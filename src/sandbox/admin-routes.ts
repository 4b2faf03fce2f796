import { UsageError } from '../errors.js';
import { HttpAnswer, readJsonBody, type Reply } from './http.js';
import type { Call, Handler, SandboxContext } from './routing.js';

function ok(body: unknown): Reply {
  return { status: 200, body: JSON.stringify(body) };
}

/**
 * A POST that replaces one kind of rules: the body is read as JSON and handed to `apply`, whose usage error (a rule
 * the schema refuses) becomes a 400 with its message; the answer shows the rules now active.
 */
function replaceRules(
  what: string,
  apply: (input: unknown, context: SandboxContext) => void,
  show: (context: SandboxContext) => unknown,
): Handler {
  return async ({ request }: Call, context: SandboxContext): Promise<Reply> => {
    const input = await readJsonBody(request, what);
    try {
      apply(input, context);
    } catch (error) {
      if (error instanceof UsageError) throw new HttpAnswer(400, { detail: error.message });
      throw error;
    }
    return ok(show(context));
  };
}

const showFaults = ({ state }: SandboxContext): unknown => ({ faults: state.faults });
const showPublishing = ({ state }: SandboxContext): unknown => ({ publishing: state.publishing.rules });

export const adminRoutes = {
  setFaults: replaceRules('SandboxFaults', (input, { state }) => state.setFaults(input, 'setFaults'), showFaults),
  showFaults: (_call: Call, context: SandboxContext): Reply => ok(showFaults(context)),
  setPublishing: replaceRules('publishing rules', (input, { state }) => state.setPublishing(input, 'setPublishing'), showPublishing),
  showPublishing: (_call: Call, context: SandboxContext): Reply => ok(showPublishing(context)),
  /** The requests kept and the counts of all; `?path_prefix=/oauth2` keeps the answer small after a long benchmark. */
  requests: ({ url }: Call, { state }: SandboxContext): Reply => {
    const prefix = url.searchParams.get('path_prefix') ?? '';
    const kept = state.requests.entries();
    const selected = prefix === '' ? kept : kept.filter((entry) => entry.path.startsWith(prefix));
    return ok({ requests: selected, ...state.requests.counts() });
  },
} satisfies Record<string, Handler>;
