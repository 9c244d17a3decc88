// Public API of @stepforge/engine.
export * from './interpreter/types.js';
export * from './interpreter/TaskFailure.js';
