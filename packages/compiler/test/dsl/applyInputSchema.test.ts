import { describe, expect, it } from 'vitest';
import { applyInputSchema, isStepforgeError, loadDslDocument, toInputSchema, type StepforgeError } from '@stepforge/compiler';

const schema = toInputSchema({
  topic: 'string',
  depth: { type: 'integer', required: false, default: 2 },
  tags: { type: 'array', required: false },
  meta: { type: 'object', required: true, description: 'free-form' },
  anything: 'any',
});

function failure(f: () => unknown): StepforgeError {
  try {
    f();
  } catch (e) {
    if (isStepforgeError(e)) return e;
    throw e;
  }
  throw new Error('expected invalid_input');
}

describe('Function: applyInputSchema', () => {
  it('applies defaults and passes undeclared fields through', () => {
    const out = applyInputSchema(schema, { topic: 't', meta: {}, anything: [1], extra: true });
    expect(out).toEqual({ topic: 't', depth: 2, meta: {}, anything: [1], extra: true });
  });

  it('reports every missing required field and every wrong type in one invalid_input error', () => {
    const e = failure(() => applyInputSchema(schema, { depth: 2.5, tags: 'x' }));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toBe(
      "invalid workflow input: missing required field 'topic' (string); field 'depth' must be an integer, got number; " +
        "field 'tags' must be an array, got string; missing required field 'meta' (object); missing required field 'anything' (any)",
    );
    expect(e.details?.problems).toEqual([
      { field: 'topic', problem: 'missing', expected: 'string' },
      { field: 'depth', problem: 'type', expected: 'integer', got: 'number' },
      { field: 'tags', problem: 'type', expected: 'array', got: 'string' },
      { field: 'meta', problem: 'missing', expected: 'object' },
      { field: 'anything', problem: 'missing', expected: 'any' },
    ]);
  });

  it('rejects an input that is not an object', () => {
    const e = failure(() => applyInputSchema(schema, [1, 2]));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toBe('the workflow input must be a JSON object, got array');
  });

  it('treats null as absent for optional fields (and applies their default)', () => {
    const out = applyInputSchema(schema, { topic: 't', meta: {}, anything: null, depth: null, tags: null });
    expect(out.depth).toBe(2);
    expect(out.tags).toBeNull();
    expect(out.anything).toBeNull();
  });

  it('does not share default objects between runs', () => {
    const s = toInputSchema({ opts: { type: 'object', default: { a: 1 } } });
    const first = applyInputSchema(s, {});
    (first.opts as { a: number }).a = 99;
    expect(applyInputSchema(s, {}).opts).toEqual({ a: 1 });
  });

  it('uses the schema a DSL document declares', () => {
    const r = loadDslDocument(`document: { dsl: "1.0", name: x }
agents: { a: {} }
input:
  topic: string
  n: { type: number, default: 1, description: how many }
steps:
  s: { call: agent, agent: a }
`);
    expect(r.errors).toEqual([]);
    const fields = r.document!.input.fields;
    expect(fields.map((f) => [f.name, f.type, f.required, f.location?.line])).toEqual([
      ['topic', 'string', true, 4],
      ['n', 'number', false, 5],
    ]);
    expect(applyInputSchema(r.document!.input, { topic: 'x' })).toEqual({ topic: 'x', n: 1 });
    expect(failure(() => applyInputSchema(r.document!.input, { topic: 5 })).message).toBe(
      "invalid workflow input: field 'topic' must be a string, got integer",
    );
  });
});
