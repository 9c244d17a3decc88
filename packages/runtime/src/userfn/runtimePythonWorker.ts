import type { Runtime } from '../runtime/Runtime.js';
import { PythonWorker } from './PythonWorker.js';

/**
 * The Python worker that runs Python user functions: one process for a Runtime (the embedded
 * stack's, or a Lambda container's), started by its first call and ended by the Runtime's `close()`.
 */
export function runtimePythonWorker(rt: Runtime): PythonWorker {
  return rt.keep(
    'python',
    (env) =>
      new PythonWorker({
        command: rt.config.pythonCommand,
        functionsDir: rt.config.userFunctionsDir,
        // The injected environment over this process's: PATH and the rest come along unless it says otherwise.
        env,
        // Output of no call in particular (a thread a function started, Python's own fatal errors).
        onStderr: (text) => rt.logger.info('python worker output', { text }),
      }),
  );
}
