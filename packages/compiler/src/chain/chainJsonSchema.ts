import { z } from 'zod';
import { InputFieldSpec } from '../input/InputSchema.js';
import { WORKFLOW_NAME_PATTERN } from '../workflowNameFromFile.js';
import { ChainTaskSchema, NAME_PATTERN } from './ChainTask.js';
import { TriggersSchema as ChainTriggersSchema } from '../checks/triggers.js';

/**
 * A chain document's fields as the loader reads them (CHAIN_DOCUMENT_FIELDS), for editors only: the
 * loader checks each field itself, with positions; this is the same shape said once as zod so the
 * JSON Schema comes from the task schemas the loader uses.
 */
const ChainDocumentSpec = z.strictObject({
  name: z
    .string()
    .regex(WORKFLOW_NAME_PATTERN)
    .describe('the workflow name: 1–80 letters, digits, "-" and "_" (it names the state machine); default: the file name')
    .optional(),
  description: z.string().optional(),
  chain: z
    .string()
    .min(1)
    .describe('the chain expression, e.g. "plan@web-search > [draft & critique] > judge": `@tool` tags, `[ ]`, `>`, `&` and `|`'),
  tasks: z
    .record(z.string().regex(NAME_PATTERN), ChainTaskSchema)
    .describe('each handle the chain names → its task (kind: model, tool, connector or pure)'),
  tier: z.string().min(1).describe('the tier whose budgets the agent steps get (default: standard)').optional(),
  input: z.record(z.string(), InputFieldSpec).describe('the run input: field name → type (`topic: string`) or declaration').optional(),
  seed: z.number().int().optional(),
  express: z.boolean().describe('deploy as an Express state machine when it can run as one').optional(),
  triggers: ChainTriggersSchema.describe('EventBridge rules that start the workflow').optional(),
  context_bundles: z.array(z.string()).describe("Kortecx's run-level grounding (accepted, no effect)").optional(),
});

/**
 * The JSON Schema (draft 2020-12) of a chain document, generated from the loader's zod schemas. The
 * checked-in copy at schemas/chain.schema.json is what `# yaml-language-server: $schema=…` points at.
 * A task is a `oneOf` discriminated by its `kind` constant, so an editor completes `kind:`, then that
 * kind's fields (`kind` itself may be left out, as Kortecx allows); a tool task needs `tool` unless Kortecx's `tool_contract` names it.
 */
export function chainJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ChainDocumentSpec, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  const out = { $schema, title: 'Stepforge chain document', ...rest } as Record<string, unknown>;
  const tasks = (out.properties as Record<string, { additionalProperties?: { oneOf?: Record<string, unknown>[] } }>).tasks
    ?.additionalProperties;
  for (const option of tasks?.oneOf ?? []) {
    const kind = (option.properties as Record<string, { const?: string }>).kind?.const;
    if (kind === undefined) continue;
    option.title = `kind: ${kind}`;
    // Kortecx lets a task leave `kind` out (the loader infers it from the fields); the options stay
    // exclusive without it, since each kind's required and allowed fields differ.
    const required = ((option.required as string[] | undefined) ?? []).filter((k) => k !== 'kind');
    if (required.length > 0) option.required = required;
    else delete option.required;
    if (kind === 'tool') option.anyOf = [{ required: ['tool'] }, { required: ['tool_contract'] }];
  }
  return out;
}

/** The exact text of schemas/chain.schema.json (two-space JSON plus a final newline). */
export function chainJsonSchemaText(): string {
  return JSON.stringify(chainJsonSchema(), null, 2) + '\n';
}
