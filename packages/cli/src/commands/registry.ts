import type { CliIo } from '../CliIo.js';

/** One sub-command: `run` gets the arguments after its name and returns the exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** The full text `stepforge NAME --help` prints; by default the usage line and the summary. */
  readonly help?: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/**
 * Every command, by name. Each lives in its own file under commands/ and is added here;
 * keeping the table in one place keeps `stepforge --help` complete.
 */
export async function loadCommands(): Promise<readonly Command[]> {
  // Imported lazily so that `stepforge graph` does not pay for loading the embedded stack.
  const modules = await Promise.all([
    import('./asl.js'),
    import('./compile.js'),
    import('./graph.js'),
    import('./validate.js'),
    import('./new.js'),
    import('./run.js'),
    import('./runs.js'),
    import('./approvals.js'),
    import('./serve.js'),
    import('./store.js'),
  ]);
  return modules.map((m: { default: Command }) => m.default);
}
