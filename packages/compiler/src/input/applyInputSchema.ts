import { StepforgeError } from '@stepforge/contract';
import { describeType, matchesInputType, type InputSchema } from './InputSchema.js';

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
