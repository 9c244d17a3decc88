// `${Name}` placeholders in compiled ASL: the one pattern, and the substitution CloudFormation's
// DefinitionSubstitutions performs. The embedded engine keeps its own generic substitution (it
// runs any ASL and knows nothing of ours).
import type { LambdaStepKind } from './envelope.js';
import { handlerOfKind, LAMBDA_PLACEHOLDERS } from './handlers.js';

/** A `${Name}` placeholder: a letter, then letters and digits (a `${ input.x }` template never matches). */
const PLACEHOLDER = /\$\{([A-Za-z][A-Za-z0-9]*)\}/g;

/** The placeholder text for a name: `ModelStepFunctionArn` → `${ModelStepFunctionArn}`. */
export function placeholder(name: string): string {
  return '${' + name + '}';
}

/** The placeholder of the Lambda that serves an envelope kind (`mcp_tool` → `${McpToolStepFunctionArn}`). */
export function kindPlaceholder(kind: LambdaStepKind): string {
  return placeholder(handlerOfKind(kind).placeholder);
}

/** Non-Lambda placeholders the compiler may emit. */
export const RESOURCE_PLACEHOLDERS = ['ApprovalQueueUrl', 'RunsTableName'] as const;

/** Every placeholder name the compiler may emit. */
export const ALL_PLACEHOLDERS: readonly string[] = [...Object.keys(LAMBDA_PLACEHOLDERS), ...RESOURCE_PLACEHOLDERS];

/** The distinct placeholder names in a text, sorted; with `known`, only those it lists. */
export function placeholderNames(text: string, known?: readonly string[]): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(PLACEHOLDER)) if (!known || known.includes(m[1]!)) found.add(m[1]!);
  return [...found].sort();
}

/** The distinct known placeholders used anywhere in a definition, sorted. */
export function findPlaceholders(asl: unknown): string[] {
  return placeholderNames(JSON.stringify(asl), ALL_PLACEHOLDERS);
}

/** Replace each `${Name}` placeholder by its value, leaving unknown ones (what DefinitionSubstitutions does). */
export function substitutePlaceholders(definition: string, values: Readonly<Record<string, string>>): string {
  return definition.replace(PLACEHOLDER, (whole, name: string) => values[name] ?? whole);
}
