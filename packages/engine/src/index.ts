// Public API of @stepforge/engine: run ASL in-process, the task invokers, the Step Functions
// executions API over a store, and its loopback server. Everything else is internal.

// Running a definition.
export type {
  AslDefinition,
  Checkpoint,
  Clock,
  ContextObject,
  DefinitionError,
  ExecuteOptions,
  ExecutionResult,
  ExecutionStatus,
  HistoryEvent,
  HistoryEventInput,
  QueryLanguage,
  TaskHooks,
  TaskInvocation,
  TaskInvoker,
} from './interpreter/types.js';
export type {
  MapRun,
  MapRunChild,
  MapRunChildSink,
  MapRunCounts,
  MapRunListener,
  MapRunRecord,
  MapRunStatus,
} from './interpreter/MapRun.js';
export {
  executeStateMachine,
  prepareStateMachine,
  assertSupportedResources,
  type PreparedStateMachine,
} from './interpreter/executeStateMachine.js';
export { validateDefinition } from './interpreter/validateDefinition.js';
export { TaskFailure } from './interpreter/TaskFailure.js';
export { createVirtualClock } from './interpreter/clocks.js';

// Task invokers: Lambda handlers in-process, service integrations, task tokens.
export { substitutePlaceholders } from './substitutePlaceholders.js';
export {
  createLambdaInvoker,
  LambdaRawResponse,
  type LambdaContext,
  type LambdaHandler,
  type LambdaInvokerOptions,
  type LambdaRuntime,
  type LambdaRuntimeError,
} from './lambda/createLambdaInvoker.js';
export { loadLambdaModules, parseLambdaSpec, LambdaModuleError, type LambdaModuleErrorCode } from './lambda/loadLambdaModules.js';
export { createTaskInvoker, type ComposedTaskInvoker, type TaskInvokerOptions } from './resources/createTaskInvoker.js';
export { parseServiceResource, type IntegrationPattern, type ServiceResource } from './resources/parseServiceResource.js';
export { TaskTokenRegistry } from './resources/TaskTokenRegistry.js';
export type { ServiceEndpointOptions } from './resources/SqsResource.js';
export type { ChildExecutions, ChildExecutionDescription } from './resources/StartExecutionResource.js';

// The Step Functions executions API and its stores.
export { SfnApiError, isSfnApiError } from './executions/SfnApiError.js';
export type {
  AliasRoute,
  ExecutionRecord,
  ExecutionRecordStatus,
  ExecutionStore,
  ResourceTag,
  StateMachineAlias,
  StateMachineRecord,
  StateMachineVersion,
  StoreSnapshot,
} from './executions/ExecutionStore.js';
export { MemoryExecutionStore } from './executions/MemoryExecutionStore.js';
export { DirectoryExecutionStore } from './executions/DirectoryExecutionStore.js';
export type { DamagedLine } from './executions/journalLines.js';
export { ExecutionManager, type ExecuteFn, type ExecutionManagerOptions, type ValidateFn } from './executions/ExecutionManager.js';

// The loopback server speaking the Step Functions JSON protocol.
export { asSdkOutput } from './server/wireDates.js';
export { startEngineServer, type EngineServer, type EngineServerOptions } from './server/startEngineServer.js';
export { isLoopbackHostname, localRequestRefusal, type LocalRequestRefusal } from './server/localRequestRefusal.js';
export { syncHostLookup, syncLoopbackHost } from './server/syncHost.js';
export { defaultEngine, type EngineFunctions, type LambdaHandlers } from './server/defaultEngine.js';
