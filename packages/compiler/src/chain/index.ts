// The chain-document front-end: `chain:` expression + `tasks:` map → graph and checked document.
export * from './ChainAst.js';
export * from './ChainDocument.js';
export * from './ChainTask.js';
export * from './ChainLexer.js';
export * from './parseChain.js';
export * from './buildChainGraph.js';
export * from './analyzeChain.js';
export * from './loadChainDocument.js';
export { stepIdentity, canonicalJson } from '../ir/stepIdentity.js';
export * from './kortecxTask.js';
export * from './kortecxLowering.js';
