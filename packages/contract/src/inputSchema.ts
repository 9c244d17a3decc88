// A workflow's declared `input:` fields and the check a run's input meets when it starts. In the
// contract because both the compiler (which reads the section) and the run service (which checks
// each start, on AWS too) speak it.
import { StepforgeError, type SourceLocation } from './StepforgeError.js';

/** The value types an `input:` field can declare. */
export const INPUT_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'any'] as const;

/** One input field type. */
export type InputFieldType = (typeof INPUT_FIELD_TYPES)[number];

/** One declared input field, normalised from the shorthand or mapping form. */
export interface InputField {
  readonly name: string;
  readonly type: InputFieldType;
  /** Missing required fields fail the run at start; a field with a default is never missing. */
  readonly required: boolean;
  readonly description?: string;
  /** Present only when declared (`null` is a valid default). */
  readonly default?: unknown;
  readonly hasDefault: boolean;
  readonly location?: SourceLocation;
}

/** The `input:` section of a chain or DSL document: fields in source order. */
export interface InputSchema {
  readonly fields: readonly InputField[];
}

/** True when `value` has the declared type. */
export function matchesInputType(type: InputFieldType, value: unknown): boolean {
  switch (type) {
    case 'any':
      return true;
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

/** A short description of a value's JSON type, for messages. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

/**
 * Validates a run's input against the declared fields when the run starts: every missing required
 * field and every wrongly typed field is reported (one StepforgeError `invalid_input`, the problems in
 * `details.problems`), and defaults are applied to missing fields. Undeclared fields pass through.
 * Returns a new object; the argument is not modified.
 */
export function applyInputSchema(schema: InputSchema, input: unknown): Record<string, unknown> {
  if (input !== undefined && input !== null && (typeof input !== 'object' || Array.isArray(input))) {
    throw new StepforgeError('invalid_input', `the workflow input must be a JSON object, got ${describeType(input)}`, {
      details: { problems: [{ field: null, problem: 'not_object' }] },
    });
  }
  const out: Record<string, unknown> = { ...((input ?? {}) as Record<string, unknown>) };
  const problems: { field: string; problem: 'missing' | 'type'; expected?: string; got?: string }[] = [];
  const messages: string[] = [];
  for (const f of schema.fields) {
    const present = Object.prototype.hasOwnProperty.call(out, f.name) && out[f.name] !== undefined;
    if (!present) {
      if (f.hasDefault) out[f.name] = structuredClone(f.default);
      else if (f.required) {
        problems.push({ field: f.name, problem: 'missing', expected: f.type });
        messages.push(`missing required field '${f.name}' (${f.type})`);
      }
      continue;
    }
    const v = out[f.name];
    // An explicit null counts as absent for optional fields, so callers can pass "no value".
    if (v === null && !f.required && f.type !== 'any') {
      if (f.hasDefault) out[f.name] = structuredClone(f.default);
      continue;
    }
    if (!matchesInputType(f.type, v)) {
      problems.push({ field: f.name, problem: 'type', expected: f.type, got: describeType(v) });
      messages.push(`field '${f.name}' must be ${article(f.type)} ${f.type}, got ${describeType(v)}`);
    }
  }
  if (problems.length > 0) {
    throw new StepforgeError('invalid_input', `invalid workflow input: ${messages.join('; ')}`, { details: { problems } });
  }
  return out;
}

function article(type: string): string {
  return /^[aeio]/.test(type) ? 'an' : 'a';
}
