// Public API of @stepforge/cli: the `stepforge` command, callable in-process (tests use this).
export { main } from './main.js';
export * from './CliIo.js';
