// The shape check of the most common steps without zod. zod's object parser makes a `{value, issues}`
// record for every key of a step kind's shape, present or not (about 1.3 MB for a 1,000-step
// document, a twentieth of what its compile allocates). Agent and function steps written with only
// the plain fields below are checked here and given the value zod would give; anything else (another
// kind, secrets, a retry policy, an unknown field, a value of the wrong type) is left to zod, so
// zod still decides every message and every default.
import { dslSchemas, type DslDocumentData } from './DslSchema.js';

/** The fields an agent or function step may have here, in the order zod's shape writes them (common fields, then the kind's). */
const COMMON_ORDER = ['call', 'description', 'input', 'input_template', 'output', 'after', 'when'] as const;

/** A step's `output:` must say something (the schema's regex). */
const NOT_BLANK = /\S/;

/**
 * The parsed value of one step, exactly as `DslStepSpec` parses it (same keys in the same order,
 * `input` the same value, `after` a new list), when it is an agent or function step whose fields are
 * all plain and valid; undefined otherwise (zod then parses the document, as before).
 */
export function plainStepData(raw: unknown): Record<string, unknown> | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const step = raw as Record<string, unknown>;
  const call = step.call;
  const field = call === 'agent' ? 'agent' : call === 'function' ? 'function' : undefined;
  if (field === undefined) return undefined;
  const name = step[field];
  if (typeof name !== 'string' || name === '') return undefined;
  // A strict object: any other key (secrets, retry, a misspelt field) goes to zod.
  let known = 2;
  const description = step.description;
  if (description !== undefined) {
    if (typeof description !== 'string') return undefined;
    known++;
  }
  if ('input' in step) known++;
  const template = step.input_template;
  if (template !== undefined) {
    if (typeof template !== 'string') return undefined;
    known++;
  }
  const output = step.output;
  if (output !== undefined) {
    if (typeof output !== 'string' || !NOT_BLANK.test(output)) return undefined;
    known++;
  }
  const after = step.after;
  if (after !== undefined) {
    if (Array.isArray(after)) {
      for (let i = 0; i < after.length; i++) if (typeof after[i] !== 'string' || after[i] === '') return undefined;
    } else if (typeof after !== 'string' || after === '') return undefined;
    known++;
  }
  const when = step.when;
  if (when !== undefined) {
    if (typeof when !== 'string' && typeof when !== 'boolean') return undefined;
    known++;
  }
  if (Object.keys(step).length !== known) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of COMMON_ORDER) {
    if (!(k in step)) continue;
    // zod's arrays are copies; every other value here is the one written.
    out[k] = k === 'after' && Array.isArray(after) ? [...(after as unknown[])] : step[k];
  }
  out[field] = name;
  return out;
}

/**
 * The parsed document when every step is an agent or function step with plain fields (plainStepData):
 * zod checks the rest of the document and the step names, the steps are checked by hand, and the
 * result is the value DslDocumentSpec gives. Undefined when any step is not plain or anything is
 * wrong: DslDocumentSpec then parses the whole document and reports what it finds.
 */
export function plainDocumentData(raw: Record<string, unknown>): DslDocumentData | undefined {
  const steps = raw.steps;
  if (steps === null || typeof steps !== 'object' || Array.isArray(steps)) return undefined;
  const names: string[] = [];
  const values: Record<string, unknown>[] = [];
  for (const name in steps) {
    const step = plainStepData((steps as Record<string, unknown>)[name]);
    if (step === undefined) return undefined;
    names.push(name);
    values.push(step);
  }
  if (names.length === 0) return undefined;
  const shell = dslSchemas().DslDocumentShellSpec.safeParse(raw);
  if (!shell.success) return undefined;
  const parsed: Record<string, unknown> = {};
  let i = 0;
  for (const name in shell.data.steps) {
    if (names[i] !== name) return undefined;
    parsed[name] = values[i++];
  }
  if (i !== names.length) return undefined;
  (shell.data as { steps: Record<string, unknown> }).steps = parsed;
  return shell.data as DslDocumentData;
}
