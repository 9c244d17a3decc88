// Public API of @stepforge/compiler: front-ends → IR → validation → ASL. Pure: no AWS SDK, no I/O.
export * from './errors/SourceText.js';
export * from './errors/StepforgeError.js';
export * from './envelope/StepEnvelope.js';
export * from './expr/index.js';
export * from './input/index.js';
export * from './dsl/index.js';
export * from './graph/GraphView.js';
export * from './tiers/Tier.js';
export * from './chain/index.js';
export * from './loadDocument.js';
export * from './shapes/index.js';
