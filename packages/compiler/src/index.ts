// Public API of @stepforge/compiler: front-ends → IR → validation → ASL. Pure: no AWS SDK, no I/O.
// Diagnostics are part of the compiler's API; their class lives in the contract, which every package shares.
export { SourceText, StepforgeError, isStepforgeError, formatDiagnostic, didYouMean, editDistance, type Diagnostic, type SourceLocation, type StepforgeErrorOptions } from '@stepforge/contract';
export * from './expr/index.js';
export * from './input/index.js';
export * from './dsl/index.js';
export * from './graph/GraphView.js';
export * from './graph/findCycle.js';
export * from './graph/topologicalOrder.js';
export * from './tiers/Tier.js';
export * from './chain/index.js';
export * from './loadDocument.js';
export * from './shapes/index.js';
export * from './ir/Ir.js';
export * from './ir/scheduleDag.js';
export * from './ir/chainToIr.js';
export * from './ir/dslToIr.js';
export * from './lower/lowerWorkflow.js';
export * from './lower/checkQuotas.js';
export * from './lower/expressBlocker.js';
export * from './lower/StepManifest.js';
export * from './lower/renderRetry.js';
export * from './compileDocument.js';
export * from './workflowSlug.js';
export * from './duplicateWorkflowError.js';
export { yamlErrorMessage } from './source/yamlErrorMessage.js';
export { aliasExpansionMessage, MAX_ALIAS_COUNT, yamlValueIssues, type YamlValueIssues } from './source/yamlValueIssues.js';
export * from './code/index.js';
