import { describe, expect, it } from 'vitest';
import { lineageParentFrom, parseRunReference } from '../../src/lineage/parent.js';

const RUN = '01936b2e-5c40-7a1e-9d3c-52b1f0e4a7c2';

describe('the parent run from the environment', () => {
  it('reads <namespace>/<job>/<run id>, a namespace with slashes included', () => {
    expect(parseRunReference(`airflow/dag.task/${RUN}`)).toEqual({ namespace: 'airflow', job: 'dag.task', runId: RUN });
    expect(parseRunReference(`s3://ns/x/dag.task/${RUN}`)).toEqual({ namespace: 's3://ns/x', job: 'dag.task', runId: RUN });
    for (const bad of [RUN, `dag/${RUN}`, `airflow//${RUN}`, '/dag/x', `airflow/dag/${RUN.slice(1)}`, `/dag/${RUN}`]) {
      expect(parseRunReference(bad), bad).toBeUndefined();
    }
  });

  it('a root only with a parent; a malformed value is one warning naming the variable, never its value', () => {
    expect(lineageParentFrom({})).toEqual({});
    expect(lineageParentFrom({ OPENLINEAGE_ROOT_PARENT_ID: `a/b/${RUN}` })).toEqual({});
    expect(lineageParentFrom({ OPENLINEAGE_PARENT_ID: `a/b/${RUN}`, OPENLINEAGE_ROOT_PARENT_ID: `c/d/${RUN}` })).toEqual({
      parent: { namespace: 'a', job: 'b', runId: RUN },
      root: { namespace: 'c', job: 'd', runId: RUN },
    });
    const bad = lineageParentFrom({ OPENLINEAGE_PARENT_ID: `a/b/${RUN}`, OPENLINEAGE_ROOT_PARENT_ID: 'secret-ish' });
    expect(bad.parent).toEqual({ namespace: 'a', job: 'b', runId: RUN });
    expect(bad.root).toBeUndefined();
    expect(bad.warning).toMatch(/^OPENLINEAGE_ROOT_PARENT_ID is not .* no root run$/);
    expect(bad.warning).not.toContain('secret-ish');
  });
});
