// Public API of @stepforge/embedded: the local "AWS" a project runs on (engine server, DynamoDB and
// SQS emulators on loopback, the runtime's handlers in process), its ownership across processes, and
// the embedded adapters of the run service's ports. `serve`, the other commands, the tests and the
// benches use it; it knows no command line.
export {
  openStack,
  closeOwnedStack,
  EMBEDDED_TABLE,
  EMBEDDED_APPROVAL_QUEUE,
  type EmbeddedStack,
  type OpenStackOptions,
} from './EmbeddedStack.js';
export { StackSession, openService, type OpenedStack, type SessionNotes } from './StackSession.js';
export { StackRegistry, type StackEndpoints } from './StackRegistry.js';
export { EmbeddedRunService, type RunDetails, type StartedRun, type StartOptions } from './RunService.js';
export { RegisteredCatalog, compileWorkflowFile, type RegisterOptions, type CatalogStep, type WorkflowEntry } from './RegisteredCatalog.js';
export { engineExecutions } from './engineExecutions.js';
export { runCodeWorkflow, type CodeRunOptions } from './runCodeWorkflow.js';
export {
  loadFunctionsRuntime,
  type FunctionsRuntime,
  type LocalHandlers,
  type RunRecordView,
  type StepRecordView,
  type RunEventView,
  type ApprovalRecordView,
} from './functionsRuntime.js';
export { resolvePolicy, describePolicy, type ResolvedPolicy } from './resolvePolicy.js';
export { LOOPBACK_REGION, loopbackDynamoClients, loopbackSfnClient } from './loopbackClients.js';
export { signatureRefusal, type LoopbackCredentials } from './loopbackRequestGuard.js';
export { startDynaliteWorker, type DynaliteWorker } from './startDynaliteWorker.js';
export { startSqsEmulator, type SqsEmulator } from './startSqsEmulator.js';
export { repairStore, type StoreRepair } from './repairStore.js';
