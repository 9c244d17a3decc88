// The `${ }` expression language: lexer, parser, TypeScript evaluator and JSONata translator.
export * from './ExpressionAst.js';
export * from './lexExpression.js';
export * from './parseTemplate.js';
export * from './evaluateTemplate.js';
export * from './templateToJsonata.js';
export * from './jsonataHelpers.js';
export * from './collectReferences.js';
