// The Lambda / resource placeholders the compiler leaves in ASL (DESIGN contract) and which
// deployed resource each one becomes through DefinitionSubstitutions.

/** Step handler names, as their entry files are named in functions/src/handlers/. */
export const STEP_HANDLERS = ['model', 'tool', 'connector', 'function', 'mcpTool'] as const;
/** A step handler name. */
export type StepHandlerName = (typeof STEP_HANDLERS)[number];

/** Every handler the stack deploys: the step handlers plus the API, trigger starter and approvals. */
export const ALL_HANDLERS = [...STEP_HANDLERS, 'api', 'trigger', 'approvals'] as const;
/** Any deployed handler name. */
export type HandlerName = (typeof ALL_HANDLERS)[number];

/**
 * The Python function Lambda (functions/python/stepforge_lambda.py): deployed beside the Node
 * handlers when a workflow has a function step whose function is a Python module, and named by
 * the placeholder its Tasks are given at synth time (see routePythonFunctions).
 */
export const PYTHON_FUNCTION_HANDLER = 'pythonFunction';
/** The placeholder of the Python function Lambda. */
export const PYTHON_FUNCTION_PLACEHOLDER = 'PythonFunctionStepFunctionArn';
/** A Lambda a state machine's Task may name: a step handler or the Python function Lambda. */
export type TaskHandlerName = StepHandlerName | typeof PYTHON_FUNCTION_HANDLER;

/** Placeholder → the Lambda whose ARN fills it. */
export const LAMBDA_PLACEHOLDERS: Readonly<Record<string, TaskHandlerName>> = {
  ModelStepFunctionArn: 'model',
  ToolStepFunctionArn: 'tool',
  ConnectorStepFunctionArn: 'connector',
  FunctionStepFunctionArn: 'function',
  McpToolStepFunctionArn: 'mcpTool',
  [PYTHON_FUNCTION_PLACEHOLDER]: PYTHON_FUNCTION_HANDLER,
};

/** Non-Lambda placeholders. */
export const RESOURCE_PLACEHOLDERS = ['ApprovalQueueUrl', 'RunsTableName'] as const;

/** Every placeholder name the compiler may emit. */
export const ALL_PLACEHOLDERS: readonly string[] = [...Object.keys(LAMBDA_PLACEHOLDERS), ...RESOURCE_PLACEHOLDERS];

/** The distinct known `${Name}` placeholders used anywhere in a definition, sorted. */
export function findPlaceholders(asl: unknown): string[] {
  const text = JSON.stringify(asl);
  const found = new Set<string>();
  for (const m of text.matchAll(/\$\{([A-Za-z][A-Za-z0-9]*)\}/g)) {
    if (ALL_PLACEHOLDERS.includes(m[1]!)) found.add(m[1]!);
  }
  return [...found].sort();
}

/** Replace each `${Name}` placeholder by its value (what CloudFormation does with DefinitionSubstitutions). */
export function substitutePlaceholders(definition: string, values: Readonly<Record<string, string>>): string {
  return definition.replace(/\$\{([A-Za-z][A-Za-z0-9]*)\}/g, (whole, name: string) => values[name] ?? whole);
}
