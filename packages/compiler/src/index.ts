// Public API of @stepforge/compiler: front-ends → IR → validation → ASL. Pure: no AWS SDK, no I/O.
// A curated surface: what the CLI, the CDK app, the `stepforge` package and the tests import, and the
// types of what they are given. Everything else is the compiler's own business.
// Diagnostics are part of the compiler's API; their class lives in the contract, which every package shares.
export {
  type Diagnostic,
  didYouMean,
  errorsOf,
  formatDiagnostic,
  isStepforgeError,
  type SourceLocation,
  SourceText,
  StepforgeError,
} from '@stepforge/contract';
export { formatChainNode } from './chain/ChainAst.js';
export { type ChainDocument } from './chain/ChainDocument.js';
export { ChainLexer, ChainTokenKind } from './chain/ChainLexer.js';
export { analyzeChain } from './chain/analyzeChain.js';
export { buildChainGraph, type ChainGraph } from './chain/buildChainGraph.js';
export { kortecxLowering } from './chain/kortecxLowering.js';
export {
  loadChainDocument,
  loadChainDocumentFast,
  loadChainDocumentPrecise,
  loadChainExpression,
  type LoadChainOptions,
} from './chain/loadChainDocument.js';
export { parseChain } from './chain/parseChain.js';
export { expressBlocker } from './checks/quotas/express.js';
export { isEventPattern, TRIGGER_DESCRIPTION_MAX, TRIGGER_FIELDS, TRIGGER_NAME } from './checks/triggers.js';
export {
  agent,
  type Agent,
  agentNode,
  CODE_CALL_SITE,
  type CodeWorkflowValue,
  END,
  parallel,
  setCodeRunner,
  stateGraph,
  type StateGraph,
  workflow,
} from './code/agentSdk.js';
export { KORTYX_WORKFLOW_FILE, kortyxFileModule } from './code/kortyxFile.js';
export { codeGraphView } from './code/codeGraphView.js';
export { locateWorkflowEntry, type TextPosition } from './code/locateWorkflowEntry.js';
export { codeChildren, codeToIr, codeWorkflowExports, kortyxEdgeWarnings } from './code/codeToIr.js';
export {
  defineWorkflow,
  type NodeFn,
  type NodeResult,
  useWorkflow,
  validateWorkflow,
  type WorkflowDefinition,
} from './code/defineWorkflow.js';
export { type CompileExplain, compileDocument, compileIr, type CompileOptions, type CompileResult } from './compileDocument.js';
export { type DslDocument, type DslForEachStep, type DslStep } from './dsl/DslDocument.js';
export {
  loadDslDocument,
  loadDslDocumentFast,
  loadDslDocumentPrecise,
  type LoadDslOptions,
  MISSING_VERSION,
  type UserFunctionsFolder,
} from './dsl/loadDslDocument.js';
export { workflowJsonSchemaText } from './dsl/workflowJsonSchema.js';
export { duplicateWorkflowError, type NamedWorkflow } from './duplicateWorkflowError.js';
export { type PathRoot } from './expr/ExpressionAst.js';
export { templateStepReferences } from './expr/collectReferences.js';
export { evaluateCondition, evaluateTemplate } from './expr/evaluateTemplate.js';
export { JSONATA_HELPERS, jsonataHelpersUsed, withJsonataHelpers } from './expr/jsonataHelpers.js';
export { parseExpression, parseTemplate } from './expr/parseTemplate.js';
export { expressionToJsonata, templateToJsonata } from './expr/templateToJsonata.js';
export { type GraphView, graphViewToJson, renderDot, renderMermaid } from './graph/GraphView.js';
export { findCycle } from './graph/findCycle.js';
export { topologicalOrder, topologicalOrderOfAdjacency } from './graph/topologicalOrder.js';
export { type InputSchema, toInputSchema } from './input/InputSchema.js';
export { applyInputSchema } from './input/applyInputSchema.js';
export { type IrControl, type IrDocument, type IrWorkflow } from './ir/Ir.js';
export { controlSteps, levelMakespan, makespanOf, scheduleDag } from './ir/scheduleDag.js';
export { canonicalJson, stepIdentity } from './ir/stepIdentity.js';
export { loadDocument, type LoadDocumentOptions, type LoadDocumentResult } from './loadDocument.js';
export { type StepHandler, type StepManifest, type StepManifestEntry } from './lower/StepManifest.js';
export { chainDocumentToYaml } from './shapes/ChainDocumentSource.js';
export { consensus, MAJORITY_JSONATA } from './shapes/consensus.js';
export { fanOutGather } from './shapes/fanOutGather.js';
export { type ShapeInfo, SHAPES } from './shapes/index.js';
export { mapReduce, REDUCE_JSONATA } from './shapes/mapReduce.js';
export { reviewLoop } from './shapes/reviewLoop.js';
export { supervisor } from './shapes/supervisor.js';
export { swarm } from './shapes/swarm.js';
export { yamlErrorMessage } from './source/yamlErrorMessage.js';
export { aliasExpansionMessage, MAX_ALIAS_COUNT, yamlValueIssues } from './source/yamlValueIssues.js';
export { DEFAULT_TIERS } from './tiers/Tier.js';
export { WORKFLOW_NAME_MAX, workflowSlug } from './workflowSlug.js';
