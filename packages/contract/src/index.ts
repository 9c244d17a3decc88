// Public API of @stepforge/contract: the vocabulary every other package speaks — the step
// envelope and results, the handler table and placeholders, the run-start limits, and the one
// error class with its source locations. Depends on zod only.
export { SourceText } from './SourceText.js';
export * from './StepforgeError.js';
export * from './didYouMean.js';
export * from './envelope.js';
export { mcpToolName } from './mcpToolName.js';
export { mcpServerProblem, MCP_SERVER_SHAPE, type McpServerProblem } from './mcpServerConfig.js';
export * from './runStart.js';
export * from './handlers.js';
export * from './placeholders.js';
export * from './liveWorkflows.js';
export * from './contenoxTools.js';
export * from './inputSchema.js';
export * from './manifest.js';
export * from './apiBodies.js';
export * from './apiRoutes.js';
export * from './apiErrors.js';
export { OPENAPI_DOCUMENT } from './openApiDocument.js';
