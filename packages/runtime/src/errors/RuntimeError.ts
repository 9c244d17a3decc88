/**
 * The stable error names a step handler may throw. ASL `Retry`/`Catch` match on `Error`, which
 * Lambda fills with the thrown error's `name`, so these strings are a public contract.
 */
export const RUNTIME_ERROR_NAMES = [
  'InvalidEnvelope',
  'InvalidInput',
  'ToolNotGranted',
  'UnknownTool',
  'PolicyDenied',
  'ApprovalRejected',
  'BudgetExceeded',
  'JudgeChoiceNotCandidate',
  'StepOutcomeUnknown',
  'StepInProgress',
  'ProviderError',
  'ConnectorError',
  'ToolError',
  'FunctionError',
  'McpError',
  'SecretNotFound',
  'OutputTooLarge',
  'ConfigError',
  'NotFound',
  'IdempotencyKeyConflict',
  'CodeModuleLoadError',
  'NodeError',
  'UnknownNode',
  'WorkflowInputInvalid',
  'WorkflowOutputInvalid',
  'WorkflowCallNotDeclared',
  'WorkflowChildAttemptsExhausted',
  'HandoffTargetUnknown',
] as const;

/** One of the stable runtime error names. */
export type RuntimeErrorName = (typeof RUNTIME_ERROR_NAMES)[number];

/** A runtime failure with a stable `name` (what ASL matches) and machine-readable details. */
export class RuntimeError extends Error {
  override readonly name: RuntimeErrorName;
  readonly details?: Readonly<Record<string, unknown>>;
  /** True when retrying the same call may succeed (throttling, 5xx, network). */
  readonly retryable: boolean;

  constructor(
    name: RuntimeErrorName,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
  }

  toJSON(): { name: string; message: string; details?: Readonly<Record<string, unknown>> } {
    return { name: this.name, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** Matches by `name` (never instanceof: bundles duplicate classes). */
export function isRuntimeError(e: unknown, name?: RuntimeErrorName): e is RuntimeError {
  if (typeof e !== 'object' || e === null) return false;
  const n = (e as { name?: unknown }).name;
  if (typeof n !== 'string' || !(RUNTIME_ERROR_NAMES as readonly string[]).includes(n)) return false;
  return name === undefined || n === name;
}
