// Public API of @stepforge/engine.
export * from './interpreter/types.js';
export * from './interpreter/TaskFailure.js';
export * from './interpreter/executeStateMachine.js';
export * from './interpreter/validateDefinition.js';
export * from './interpreter/clocks.js';
export * from './lambda/createLambdaInvoker.js';
