// Public API of @stepforge/cli: the `stepforge` command, callable in-process (the tests use this), the
// I/O it writes to, and its exit codes. The `stepforge` package's entry for programs is code.ts.
export { main } from './main.js';
export { EXIT_OK, EXIT_FAILURE, EXIT_USAGE, type CliIo } from './CliIo.js';
