// The one table of step handlers: which step kinds each Lambda serves, the placeholder the
// compiled ASL names it by, the function name the embedded engine registers it under, and its
// entry file in the runtime's handlers/ folder. The compiler, the runtime, the embedded stack
// and the CDK app all read this table, so a handler is spelled one way everywhere.
import type { LambdaStepKind } from './envelope.js';

/** A step handler's id: the name the CDK app deploys it under. */
export type StepHandlerId = 'model' | 'tool' | 'connector' | 'function' | 'mcpTool';

/** One step handler. */
export interface StepHandlerRow {
  readonly id: StepHandlerId;
  /** The envelope kinds this handler answers. */
  readonly kinds: readonly LambdaStepKind[];
  /** The placeholder name in the ASL (`${ModelStepFunctionArn}` → `ModelStepFunctionArn`). */
  readonly placeholder: string;
  /** The Lambda function name the embedded engine registers (the placeholder's ARN names it). */
  readonly functionName: string;
  /** The entry file's base name under the runtime's handlers/ folder. */
  readonly entry: string;
}

/** Every step handler, in deployment order. */
export const STEP_HANDLER_TABLE: readonly StepHandlerRow[] = [
  { id: 'model', kinds: ['model', 'agent'], placeholder: 'ModelStepFunctionArn', functionName: 'ModelStepFunction', entry: 'model' },
  { id: 'tool', kinds: ['tool'], placeholder: 'ToolStepFunctionArn', functionName: 'ToolStepFunction', entry: 'tool' },
  {
    id: 'connector',
    kinds: ['connector'],
    placeholder: 'ConnectorStepFunctionArn',
    functionName: 'ConnectorStepFunction',
    entry: 'connector',
  },
  { id: 'function', kinds: ['function'], placeholder: 'FunctionStepFunctionArn', functionName: 'FunctionStepFunction', entry: 'function' },
  { id: 'mcpTool', kinds: ['mcp_tool'], placeholder: 'McpToolStepFunctionArn', functionName: 'McpToolStepFunction', entry: 'mcp_tool' },
];

/** The step handler ids, in deployment order. */
export const STEP_HANDLERS = STEP_HANDLER_TABLE.map((h) => h.id) as readonly StepHandlerId[];

/** Every handler the AWS stack deploys: the step handlers plus the API, trigger starter and approvals. */
export const ALL_HANDLERS = [...STEP_HANDLERS, 'api', 'trigger', 'approvals'] as const;
/** Any deployed Node handler's id. */
export type HandlerId = (typeof ALL_HANDLERS)[number];

/**
 * The deploy-time Lambda of the AWS stack that writes each workflow's record (input schema, steps,
 * edges) into the runs table: a CloudFormation custom resource, invoked by no state machine or API.
 */
export const WORKFLOW_RECORD_HANDLER = 'workflowRecord' as const;

/**
 * The Python function Lambda: deployed on AWS beside the Node handlers when a function step's
 * function is a Python module (embedded, the function handler runs Python in a worker process).
 */
export const PYTHON_FUNCTION_HANDLER = 'pythonFunction';
/** The placeholder of the Python function Lambda. */
export const PYTHON_FUNCTION_PLACEHOLDER = 'PythonFunctionStepFunctionArn';
/** A Lambda a state machine's Task may name: a step handler or the Python function Lambda. */
export type TaskHandlerId = StepHandlerId | typeof PYTHON_FUNCTION_HANDLER;

/** The handler that serves an envelope kind. */
export function handlerOfKind(kind: LambdaStepKind): StepHandlerRow {
  const row = STEP_HANDLER_TABLE.find((h) => h.kinds.includes(kind));
  if (!row) throw new Error(`no step handler serves kind '${kind}'`);
  return row;
}

/** The handler by id. */
export function handlerById(id: StepHandlerId): StepHandlerRow {
  return STEP_HANDLER_TABLE.find((h) => h.id === id)!;
}

/** Placeholder name → the Lambda whose ARN fills it (the step handlers and the Python function Lambda). */
export const LAMBDA_PLACEHOLDERS: Readonly<Record<string, TaskHandlerId>> = Object.fromEntries([
  ...STEP_HANDLER_TABLE.map((h) => [h.placeholder, h.id] as const),
  [PYTHON_FUNCTION_PLACEHOLDER, PYTHON_FUNCTION_HANDLER] as const,
]);

/**
 * A manifest's handler or kind spelling → its step handler id: an envelope kind (`mcp_tool`),
 * an id (`mcpTool`), or a placeholder (`${McpToolStepFunctionArn}`); undefined for anything else.
 */
export function stepHandlerIdOf(name: unknown): StepHandlerId | undefined {
  if (typeof name !== 'string') return undefined;
  const bare = name.replace(/^\$\{|\}$/g, '');
  const row = STEP_HANDLER_TABLE.find((h) => h.id === bare || h.placeholder === bare || (h.kinds as readonly string[]).includes(bare));
  return row?.id;
}
