/** A run as a scheduler names it to the runs it starts: `<namespace>/<job>/<run id>`. */
export interface RunReference {
  readonly namespace: string;
  readonly job: string;
  readonly runId: string;
}

/** The parent (and root) run a scheduler hands over, and what could not be read. */
export interface LineageParent {
  readonly parent?: RunReference;
  readonly root?: RunReference;
  /** One line for a malformed value: the run goes on without it. */
  readonly warning?: string;
}

/** The variables Airflow's OpenLineage macros, dbt-ol and Spark's listener use to hand a task's run to its children. */
export const PARENT_ENV = { parent: 'OPENLINEAGE_PARENT_ID', root: 'OPENLINEAGE_ROOT_PARENT_ID' } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `<namespace>/<job>/<run id>`: the run id after the last slash, the job before it, the namespace the rest (a
 * namespace may hold slashes, a job name does not). Undefined when a part is empty or the run id is no UUID.
 */
export function parseRunReference(text: string): RunReference | undefined {
  const last = text.lastIndexOf('/');
  const previous = last <= 0 ? -1 : text.lastIndexOf('/', last - 1);
  if (previous <= 0) return undefined;
  const reference = { namespace: text.slice(0, previous), job: text.slice(previous + 1, last), runId: text.slice(last + 1) };
  return reference.job !== '' && UUID.test(reference.runId) ? reference : undefined;
}

/** The parent and root runs from the environment; a malformed value is left out with one warning naming it. */
export function lineageParentFrom(env: NodeJS.ProcessEnv): LineageParent {
  const read = (name: string): { reference?: RunReference; bad?: string } => {
    const text = env[name]?.trim();
    if (text === undefined || text === '') return {};
    const reference = parseRunReference(text);
    return reference === undefined ? { bad: name } : { reference };
  };
  const parent = read(PARENT_ENV.parent);
  // A root without a parent says nothing about this run's place in a tree.
  const root = parent.reference === undefined ? {} : read(PARENT_ENV.root);
  const bad = [parent.bad, root.bad].filter((name) => name !== undefined);
  return {
    ...(parent.reference === undefined ? {} : { parent: parent.reference }),
    ...(root.reference === undefined ? {} : { root: root.reference }),
    ...(bad.length === 0
      ? {}
      : {
          warning: `${bad.join(' and ')} ${bad.length === 1 ? 'is' : 'are'} not <namespace>/<job>/<run id> (a UUID): the lineage events name no ${
            parent.bad === undefined ? 'root' : 'parent'
          } run`,
        }),
  };
}
