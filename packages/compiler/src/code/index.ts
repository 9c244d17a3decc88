// Workflows written in code: Kortyx's defineWorkflow and the agent SDK's builders.
export * from './defineWorkflow.js';
export * from './agentSdk.js';
export * from './codeToIr.js';
export * from './codeGraphView.js';
export * from './sdkToIr.js';
export * from './kortyxFile.js';
