// The workflow DSL front-end: YAML documents with ten step kinds, `${ }` expressions and a dependency graph.
export * from './DslDocument.js';
export * from './DslSchema.js';
export * from './loadDslDocument.js';
export * from './dslGraphView.js';
export * from './workflowJsonSchema.js';
