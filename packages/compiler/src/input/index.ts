// The `input:` schema shared by chain and DSL documents, and run-start validation.
export * from './InputSchema.js';
export * from './applyInputSchema.js';
