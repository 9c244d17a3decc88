// Public API of @stepforge/functions.
export {};
// Used by the embedded stack (packages/cli/src/stack): config, the one table, the Runtime object.
export * from './config/RuntimeConfig.js';
export * from './persistence/Tables.js';
export * from './runtime/Runtime.js';
