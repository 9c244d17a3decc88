import { z } from 'zod';
import { DslDocumentSpec } from './DslSchema.js';

/**
 * The JSON Schema (draft 2020-12) of a DSL document, generated from the zod schema. The checked-in
 * copy at schemas/workflow.schema.json is what `# yaml-language-server: $schema=…` points at.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(DslDocumentSpec, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return { $schema, title: 'Stepforge workflow DSL document', ...rest };
}

/** The exact text of schemas/workflow.schema.json (two-space JSON plus a final newline). */
export function workflowJsonSchemaText(): string {
  return JSON.stringify(workflowJsonSchema(), null, 2) + '\n';
}
