// Public API of @stepforge/engine.
export * from './interpreter/types.js';
export * from './interpreter/TaskFailure.js';
export * from './interpreter/executeStateMachine.js';
export * from './interpreter/validateDefinition.js';
export * from './interpreter/clocks.js';
export * from './lambda/createLambdaInvoker.js';
// Executions, resources and the API server (engine engineer 2).
export * from './resources/parseServiceResource.js';
export * from './resources/TaskTokenRegistry.js';
export * from './resources/createTaskInvoker.js';
export type { ServiceEndpointOptions } from './resources/SqsResource.js';
export type { ChildExecutions, ChildExecutionDescription } from './resources/StartExecutionResource.js';
export * from './executions/SfnApiError.js';
export * from './executions/ExecutionStore.js';
export * from './executions/MemoryExecutionStore.js';
export * from './executions/DirectoryExecutionStore.js';
export type { DamagedLine } from './executions/journalLines.js';
export * from './executions/ExecutionManager.js';
export * from './executions/definitionText.js';
export * from './server/startEngineServer.js';
export * from './server/localRequestRefusal.js';
export type { LambdaHandlers, EngineFunctions } from './server/defaultEngine.js';
export { defaultEngine } from './server/defaultEngine.js';
