import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ROOT } from './cli.js';

/** The spec's own schemas (copied), and the schema of this project's own facet, as it ships in docs/. */
const SCHEMA_FOLDERS = [join(ROOT, 'test/fixtures/openlineage'), join(ROOT, 'docs/openlineage')];

/** Ajv with the OpenLineage spec's own schemas (test/fixtures/openlineage) and ours, formats checked. */
function specValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const folder of SCHEMA_FOLDERS) {
    for (const name of readdirSync(folder).filter((file) => file.endsWith('.json'))) {
      ajv.addSchema(JSON.parse(readFileSync(join(folder, name), 'utf8')) as object);
    }
  }
  return ajv;
}

const ajv = specValidator();

function validatorOf(url: string): ValidateFunction {
  const validate = ajv.getSchema(url);
  if (validate === undefined) throw new Error(`no schema in test/fixtures/openlineage for ${url}`);
  return validate;
}

/** Every facet in an event, with where it is, so each can be checked against the schema its `_schemaURL` names. */
function facetsOf(event: Record<string, unknown>): { where: string; facet: Record<string, unknown> }[] {
  const found: { where: string; facet: Record<string, unknown> }[] = [];
  const add = (where: string, facets: unknown): void => {
    for (const [name, facet] of Object.entries((facets ?? {}) as Record<string, Record<string, unknown>>))
      found.push({ where: `${where}.${name}`, facet });
  };
  const { run, job, inputs, outputs } = event as {
    run?: { facets?: unknown };
    job?: { facets?: unknown };
    inputs?: { facets?: unknown }[];
    outputs?: { facets?: unknown; outputFacets?: unknown }[];
  };
  add('run.facets', run?.facets);
  add('job.facets', job?.facets);
  (inputs ?? []).forEach((input, index) => add(`inputs[${index}].facets`, input.facets));
  (outputs ?? []).forEach((output, index) => {
    add(`outputs[${index}].facets`, output.facets);
    add(`outputs[${index}].outputFacets`, output.outputFacets);
  });
  return found;
}

/**
 * The schema errors of an OpenLineage event: against the RunEvent its `schemaURL` names, and each facet against the
 * facet schema its `_schemaURL` names (an unknown URL is an error too). Empty when the event is valid.
 */
export function openLineageErrors(event: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const check = (url: unknown, value: unknown, where: string): void => {
    if (typeof url !== 'string') {
      errors.push(`${where}: no schema URL`);
      return;
    }
    const validate = validatorOf(url);
    if (!validate(value))
      errors.push(...(validate.errors ?? []).map((error) => `${where}${error.instancePath} ${error.message ?? ''} (${url})`));
  };
  check(event.schemaURL, event, 'event');
  for (const { where, facet } of facetsOf(event)) check(facet._schemaURL, facet, where);
  return errors;
}
