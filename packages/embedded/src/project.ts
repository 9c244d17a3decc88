// The part of @stepforge/embedded that loads no stack: what the commands that run nothing (`validate`,
// `compile`, `graph`) share with it. A subpath of its own because those commands'
// bundles must not hold the engine, the emulators or the AWS SDK (scripts/bundleCli.mjs checks it),
// and the package's index holds all three.
export { CODE_MODULE, compileCodeModule, codeModuleIr, loadCodeModule, type LoadedCodeModule } from './compileCodeModule.js';
export { workflowNameClash } from './workflowNameClash.js';
export { ensureDirectory, ioError } from './ensureDirectory.js';
export { errnoReason } from './errnoReason.js';
