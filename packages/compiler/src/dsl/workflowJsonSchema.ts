import { z } from 'zod';
import { dslSchemas } from './DslSchema.js';

/**
 * Field pairs the loader reads as two spellings of one field (GraphN writes both): a step needs
 * exactly one of each pair. zod cannot say so in JSON Schema; these become `oneOf` of `required`.
 */
const SPELLINGS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  parallel_analyzer: [
    ['analysts', 'agents'],
    ['aggregator', 'aggregator_agent'],
  ],
  judge_loop: [
    ['generator', 'worker_agent'],
    ['evaluator', 'judge_agent'],
  ],
};

/**
 * The JSON Schema (draft 2020-12) of a DSL document, generated from the zod schema. The checked-in
 * copy at schemas/workflow.schema.json is what `# yaml-language-server: $schema=…` points at.
 *
 * Steps are a mapping of step name → definition; a definition is a `oneOf` discriminated by its
 * `call` constant (so an editor completes the `call:` values, then that kind's fields), under
 * `$defs.step`. What zod's refinements check is added by hand: at least one step in a mapping,
 * and one of each pair of spellings.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(dslSchemas().DslDocumentSpec, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  const out = { $schema, title: 'Stepforge workflow DSL document', ...rest } as Record<string, unknown>;
  const defs = (out.$defs ?? {}) as Record<string, unknown>;
  // zod names the recursive step definition after its position; give it a name people can read.
  const [stepKey] = Object.keys(defs).filter((k) => Array.isArray((defs[k] as { oneOf?: unknown }).oneOf));
  if (stepKey === undefined) throw new Error('workflowJsonSchema: the step definition is missing from $defs');
  const renamed = JSON.parse(JSON.stringify(out).split(`"#/$defs/${stepKey}"`).join('"#/$defs/step"')) as Record<string, unknown>;
  const renamedDefs = renamed.$defs as Record<string, unknown>;
  const kinds = (renamedDefs.step = renamedDefs[stepKey]) as { oneOf: Record<string, unknown>[] };
  delete renamedDefs[stepKey];
  Object.assign(kinds, {
    title: 'Step',
    description:
      "A step: call: names its kind (agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop), then that kind's fields.",
  });
  for (const option of kinds.oneOf) {
    const props = option.properties as Record<string, { const?: string }>;
    const call = props.call?.const;
    if (call === undefined) continue;
    option.title = `call: ${call}`;
    option.required = [...new Set(['call', ...((option.required as string[] | undefined) ?? [])])];
    const pairs = SPELLINGS[call];
    if (pairs) option.allOf = pairs.map(([a, b]) => ({ oneOf: [{ required: [a] }, { required: [b] }] }));
  }
  // Every step mapping (`steps:` and each `do:`) holds at least one step.
  const mark = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(mark);
    const o = node as Record<string, unknown>;
    if ((o.additionalProperties as { $ref?: string } | undefined)?.$ref === '#/$defs/step') o.minProperties = 1;
    for (const v of Object.values(o)) mark(v);
  };
  mark(renamed);
  return renamed;
}

/** The exact text of schemas/workflow.schema.json (two-space JSON plus a final newline). */
export function workflowJsonSchemaText(): string {
  return JSON.stringify(workflowJsonSchema(), null, 2) + '\n';
}
