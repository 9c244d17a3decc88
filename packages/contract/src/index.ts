// Public API of @stepforge/contract: the vocabulary every other package speaks — the step
// envelope and results, the handler table and placeholders, the run-start limits, and the one
// error class with its source locations. Depends on zod only.
export { SourceText } from './SourceText.js';
export {
  errorsOf,
  isStepforgeError,
  formatDiagnostic,
  type SourceLocation,
  type StepforgeErrorOptions,
  StepforgeError,
  type Diagnostic,
} from './StepforgeError.js';
export { didYouMean } from './didYouMean.js';
export {
  isRefValue,
  LambdaStepKind,
  OutputRef,
  RefValue,
  EnvelopeRun,
  EnvelopeStep,
  Budget,
  EnvelopeInputs,
  ToolCall,
  Usage,
  EnvelopeTurn,
  StepEnvelope,
  type StepEnvelopeInput,
  StepResult,
  ModelTurnResult,
  ToolCallResult,
  RunMeta,
} from './envelope.js';
export {
  ENVELOPE_VERSION,
  INLINE_OUTPUT_MAX_BYTES,
  ITERATION_INLINE_OUTPUT_MAX_BYTES,
  RUN_META_KEY,
  STATE_READ_OUTPUT_MAX_BYTES,
} from './envelopeLimits.js';
export { mcpToolName } from './mcpToolName.js';
export { mcpServerProblem, MCP_SERVER_SHAPE, type McpServerProblem } from './mcpServerConfig.js';
export {
  executionInputSizeError,
  idempotencyKeyError,
  inputDepthError,
  MAX_EXECUTION_INPUT_BYTES,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_INPUT_DEPTH,
} from './runStart.js';
export {
  handlerOfKind,
  handlerById,
  stepHandlerIdOf,
  type StepHandlerId,
  type StepHandlerRow,
  STEP_HANDLER_TABLE,
  STEP_HANDLERS,
  ALL_HANDLERS,
  type HandlerId,
  PYTHON_FUNCTION_HANDLER,
  PYTHON_FUNCTION_PLACEHOLDER,
  type TaskHandlerId,
  LAMBDA_PLACEHOLDERS,
  WORKFLOW_RECORD_HANDLER,
} from './handlers.js';
export {
  placeholder,
  kindPlaceholder,
  placeholderNames,
  findPlaceholders,
  substitutePlaceholders,
  RESOURCE_PLACEHOLDERS,
  ALL_PLACEHOLDERS,
} from './placeholders.js';
export {
  registerLiveWorkflow,
  liveWorkflow,
  forgetLiveWorkflow,
  keepLiveWorkflow,
  parseLiveModule,
  LIVE_MODULE_PREFIX,
  LIVE_RELOAD,
  LIVE_RELOADED,
  type LiveReload,
} from './liveWorkflows.js';
export {
  contenoxToolSetOf,
  mapContenoxTool,
  knownToolNames,
  CONTENOX_TOOLS,
  OWN_TOOLS,
  CONTENOX_POLICY_KEYS,
  CONTENOX_ENFORCED_POLICY_KEYS,
} from './contenoxTools.js';
/** Where a JSON text stops being JSON: the offset of the first character a strict scan cannot accept. */
export { jsonErrorOffset } from './jsonErrorOffset.js';
export {
  matchesInputType,
  describeType,
  applyInputSchema,
  INPUT_FIELD_TYPES,
  type InputFieldType,
  type InputField,
  type InputSchema,
} from './inputSchema.js';
export {
  type ManifestExpress,
  type ManifestStepHandler,
  type ManifestStepKind,
  type ManifestTrigger,
  type StepManifest,
  type StepManifestEntry,
} from './manifest.js';
export { parseApiBody, type ApiBodySchema, API_BODIES, type ApiBodyError } from './apiBodies.js';
export { type ApiOperation, RUN_STATUSES, APPROVAL_STATUSES, type ApiRoute, API_ROUTES } from './apiRoutes.js';
export { httpStatusOf, errorBody, type ErrorBody, HTTP_STATUS_OF } from './apiErrors.js';
export { openApiDocument } from './openApiDocument.js';
