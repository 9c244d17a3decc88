/**
 * Each command's name, one-line summary and usage line, in the order `stepforge --help` lists them.
 * A module of data alone: `--help` and the dispatch read it without loading any command, and each
 * command's own module reads its texts from here, so there is one copy of each.
 */
export const COMMAND_TEXT = {
  asl: {
    summary: 'Run a raw ASL definition in the embedded engine',
    usage: 'asl run DEFINITION.json --input JSON|@FILE|- [--handlers MODULE] [--history]',
  },
  compile: {
    summary: 'Compile a chain or DSL document to Step Functions ASL + step manifest',
    usage: 'compile FILE [-o DIR] [--explain] [--express] [--strict] [--export NAME] [--json]',
  },
  graph: {
    summary: 'Print the step graph of a chain or DSL document (text, JSON, Mermaid, DOT)',
    usage: 'graph FILE|--expr EXPR [--json | --format text|json|mermaid|dot|kortecx] [--export NAME]',
  },
  validate: {
    summary: 'Check a chain or DSL document (all checks); prints ok or located errors',
    usage: 'validate FILE [--json] [--strict] [--export NAME]',
  },
  new: {
    summary: 'Write a chain document for a reusable shape (swarm, supervisor, consensus, …)',
    usage: 'new SHAPE [--count N] [--tools a,b] [--model ID] [--name NAME] [-o FILE]',
  },
  run: {
    summary: 'compile a workflow, run it on the embedded stack and show live progress',
    usage:
      'run FILE|--chain FILE [--input JSON|@file|-] [--var NAME=VALUE]... [--idempotency-key K] [--export NAME] [--provider P] [--json]',
  },
  runs: {
    summary: "list runs, show one, retry its unfinished steps, restart it from a step, cancel it, or record a step's outcome by hand",
    usage:
      'runs list [--workflow W] [--status S] [--limit N] | show ID [--open] | retry ID | restart ID --from STEP | cancel ID [--reason R] | resolve ID --step S --output JSON|@file|-',
  },
  approvals: {
    summary: 'list tool calls waiting for a human, approve or reject one',
    usage: 'approvals list | approve ID [--comment C] | reject ID [--comment C]',
  },
  serve: {
    summary: "serve the HTTP API (and the engine's Step Functions API) on loopback",
    usage: 'serve [FILE] [--export NAME] [--port N] [--provider P] [--lambda NAME=MODULE]...',
  },
  store: {
    summary: "repair the project's run store (.stepforge/dynamodb) in place, after copying it as it was",
    usage: 'store repair [--json]',
  },
} as const satisfies Record<string, { readonly summary: string; readonly usage: string }>;

export type CommandName = keyof typeof COMMAND_TEXT;
