import { locateWorkflowEntry, StepforgeError } from '@stepforge/compiler';

/** What defineWorkflow throws for a definition that is not one (see defineWorkflow). */
interface DefineWorkflowError {
  readonly code: 'invalid_workflow';
  readonly message: string;
  readonly errors: readonly { readonly path: readonly (string | number)[]; readonly message: string }[];
  readonly workflowId?: string;
  readonly nodeNames?: readonly string[];
}

/** Whether `e` is what defineWorkflow throws for a malformed definition. */
export function isDefineWorkflowError(e: unknown): e is DefineWorkflowError {
  return (
    e !== null &&
    typeof e === 'object' &&
    (e as { code?: unknown }).code === 'invalid_workflow' &&
    Array.isArray((e as { errors?: unknown }).errors) &&
    (e as { errors: unknown[] }).errors.length > 0
  );
}

/**
 * A defineWorkflow call that refused its definition while the module loaded, as `invalid_workflow`
 * at the first offending entry in the module's source (the file's start when it cannot be found
 * there, say when the definition is built elsewhere), with what to write instead.
 */
export function invalidWorkflowError(e: DefineWorkflowError, file: string, source: string | undefined): StepforgeError {
  const first = e.errors[0]!;
  const at = source !== undefined ? locateWorkflowEntry(source, e.workflowId, first.path) : undefined;
  const hint = hintFor(first.path, e.nodeNames ?? []);
  return new StepforgeError('invalid_workflow', e.message, {
    location: { file, line: at?.line ?? 1, column: at?.column ?? 1 },
    ...(source !== undefined ? { source } : {}),
    ...(hint !== undefined ? { hint } : {}),
    details: { errors: e.errors },
  });
}

/** How to fix the entry at `path`. */
function hintFor(path: readonly (string | number)[], nodes: readonly string[]): string | undefined {
  const known = nodes.length > 0 ? ` (${nodes.join(', ')})` : '';
  const [top, , part] = path;
  if (top === 'nodes' && path.length === 1) return 'write nodes as an object of node definitions: nodes: { greet: { run: greetNode } }';
  if (top === 'nodes' && part === 'run') return 'give the node `run`: a node function, or useWorkflow(child) for a child workflow';
  if (top === 'nodes' && path.length === 2) return 'write the node as an object with run: { run: greetNode }';
  if (top === 'edges' && path.length === 1)
    return 'write edges as a list of [from, to]: edges: [["__start__", "greet"], ["greet", "__end__"]]';
  if (top === 'edges' && part === 0) return `start the edge at a node of \`nodes\`${known}, or at "__start__"`;
  if (top === 'edges' && part === 1) return `end the edge at a node of \`nodes\`${known}, or at "__end__"`;
  if (top === 'edges' && part === 2) return 'write the edge options as { when: "<condition or intent>" }';
  if (top === 'edges') return 'write an edge as [from, to] or [from, to, { when: "<condition or intent>" }]';
  return undefined;
}
