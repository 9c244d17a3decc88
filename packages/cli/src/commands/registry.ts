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

/** What `stepforge --help` lists for a command, and how to load the command itself. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** Loads the command's module, and with it only what that command needs. */
  load(): Promise<Command>;
}

const loaded = (m: { default: Command }): Command => m.default;

/**
 * Every command, by name, in the order `stepforge --help` lists them. Each lives in its own file
 * under commands/ and is added here; keeping the table in one place keeps `stepforge --help` complete.
 *
 * Names, summaries and usage lines are written here as well as in each command's file, so that
 * `--help` and the dispatch of a command load no command module but the one named: `validate` must
 * not pay for the embedded stack, nor `--help` for the compiler. commands/registry.test.ts holds the
 * two copies equal. Each command's module is imported only when that command runs (the CLI bundle
 * for a command holds that command alone: scripts/bundleCli.mjs).
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'asl', summary: 'Run a raw ASL definition in the embedded engine', usage: 'asl run DEFINITION.json --input JSON|@FILE|- [--handlers MODULE] [--history]', load: () => import('./asl.js').then(loaded) },
  { name: 'compile', summary: 'Compile a chain or DSL document to Step Functions ASL + step manifest', usage: 'compile FILE [-o DIR] [--explain] [--express] [--strict] [--export NAME] [--json]', load: () => import('./compile.js').then(loaded) },
  { name: 'graph', summary: 'Print the step graph of a chain or DSL document (text, JSON, Mermaid, DOT)', usage: 'graph FILE|--expr EXPR [--json | --format text|json|mermaid|dot|kortecx] [--export NAME]', load: () => import('./graph.js').then(loaded) },
  { name: 'validate', summary: 'Check a chain or DSL document (all checks); prints ok or located errors', usage: 'validate FILE [--json] [--strict] [--export NAME]', load: () => import('./validate.js').then(loaded) },
  { name: 'new', summary: 'Write a chain document for a reusable shape (swarm, supervisor, consensus, …)', usage: 'new SHAPE [--count N] [--tools a,b] [--model ID] [--name NAME] [-o FILE]', load: () => import('./new.js').then(loaded) },
  { name: 'run', summary: 'compile a workflow, run it on the embedded stack and show live progress', usage: 'run FILE|--chain FILE [--input JSON|@file|-] [--var NAME=VALUE]... [--idempotency-key K] [--export NAME] [--provider P] [--json]', load: () => import('./run.js').then(loaded) },
  { name: 'runs', summary: 'list runs, show one, retry its unfinished steps, restart it from a step, cancel it, or record a step\'s outcome by hand', usage: 'runs list [--workflow W] [--status S] [--limit N] | show ID [--open] | retry ID | restart ID --from STEP | cancel ID [--reason R] | resolve ID --step S --output JSON|@file|-', load: () => import('./runs.js').then(loaded) },
  { name: 'approvals', summary: 'list tool calls waiting for a human, approve or reject one', usage: 'approvals list | approve ID [--comment C] | reject ID [--comment C]', load: () => import('./approvals.js').then(loaded) },
  { name: 'serve', summary: 'serve the HTTP API (and the engine\'s Step Functions API) on loopback', usage: 'serve [FILE] [--export NAME] [--port N] [--provider P]', load: () => import('./serve.js').then(loaded) },
  { name: 'store', summary: 'repair the project\'s run store (.stepforge/dynamodb) in place, after copying it as it was', usage: 'store repair [--json]', load: () => import('./store.js').then(loaded) },
];

/** Every command, loaded (each module imported): for tests and tools that need them all. */
export async function loadCommands(): Promise<readonly Command[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}
