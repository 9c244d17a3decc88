import { parseCommandArgs } from './parseCommandArgs.js';
import {
  codeGraphView,
  graphViewToJson,
  isStepforgeError,
  kortecxLowering,
  loadChainExpression,
  loadDocument,
  renderDot,
  renderMermaid,
  StepforgeError,
  type ChainDocument,
  type GraphView,
} from '@stepforge/compiler';
import { EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { readDocumentFile, reportErrors, usageFrom } from './documentIo.js';
import type { Command } from './registry.js';
import { CODE_MODULE, codeModuleIr } from '@stepforge/embedded/project';
import { COMMAND_TEXT } from './commandText.js';

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.graph;

const HELP = `Usage: stepforge graph FILE [--json | --format text|json|mermaid|dot|kortecx]
       stepforge graph --expr "a > [b & c]" [--json | --format …]

Prints a workflow's step graph. Only the topology checks run (parse, unknown_handle,
cycle, agentic_non_model); use 'stepforge validate' for the tier and task checks.

Options:
  --json              the graph as {"nodes":[{"handle","kind","tools"}…],"edges":[[parent,child]…]}
  --format FORMAT     text (default), json, mermaid, dot, or kortecx: a chain document as Kortecx
                      lowers it ({"steps":[{kind, model_id, prompt, body_signature_id,
                      tool_contract, params}…],"edges":[{parent, child, edge}…]}); this also
                      runs the task checks (not the tier policy)
  --expr EXPR         a bare chain expression instead of a file; every handle is a model step
  --export NAME       a TypeScript/JavaScript module's workflow to draw, when it exports several

Exit status: 0 on success, 1 when the document has errors, 2 on usage errors.
`;

const FORMATS = ['text', 'json', 'mermaid', 'dot', 'kortecx'] as const;
type Format = (typeof FORMATS)[number];

/** `stepforge graph`: a document's (or a bare expression's) step graph as text, JSON, Mermaid or DOT. */
const graph: Command = {
  name: 'graph',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const parsed = parseCommandArgs(
      argv,
      {
        json: { type: 'boolean', default: false },
        format: { type: 'string' },
        expr: { type: 'string' },
        export: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      USAGE,
    );
    const { values, positionals } = parsed;
    if (values.help) {
      io.out(HELP);
      return EXIT_OK;
    }
    const format = chooseFormat(values.json, values.format);
    const json = format === 'json';
    if (values.expr !== undefined && positionals.length > 0)
      throw new UsageError(`give either FILE or --expr, not both\nUsage: stepforge ${USAGE}`);
    if (values.expr === undefined && positionals.length !== 1) {
      throw new UsageError(
        `${positionals.length === 0 ? 'missing FILE (or --expr EXPR)' : `expected one FILE, got ${positionals.length}`}\nUsage: stepforge ${USAGE}`,
      );
    }

    if (format === 'kortecx') {
      if (values.expr !== undefined)
        throw new UsageError(`--format kortecx needs a chain document (FILE): a bare expression has no tasks\nUsage: stepforge ${USAGE}`);
      const file = positionals[0]!;
      const loaded = loadDocument(await readDocumentFile(io, file), { file, level: 'full', tierPolicy: false });
      if (loaded.errors.length > 0) return reportErrors(io, loaded.errors, false);
      if (loaded.format !== 'chain' || loaded.document === undefined) {
        return reportErrors(
          io,
          [
            new StepforgeError(
              'invalid_document',
              `--format kortecx prints a chain document's Kortecx lowering; ${file} is a ${loaded.format ?? 'non'} document (use --format json)`,
              { location: { file, line: 1, column: 1 } },
            ),
          ],
          false,
        );
      }
      const lowered = kortecxLowering(loaded.document as ChainDocument);
      if (lowered.lowering === undefined) return reportErrors(io, lowered.errors, false);
      io.out(JSON.stringify(lowered.lowering) + '\n');
      return EXIT_OK;
    }

    let result: { graph?: GraphView; errors: import('@stepforge/compiler').StepforgeError[] };
    if (values.expr !== undefined) {
      result = loadChainExpression(values.expr, { file: '<expr>' });
    } else {
      const file = positionals[0]!;
      if (CODE_MODULE.test(file)) {
        // A module: its workflow's nodes and the edges between them, read from what it compiles to.
        try {
          result = { graph: codeGraphView(await codeModuleIr(io.cwd, file, values.export as string | undefined)), errors: [] };
        } catch (e) {
          if (!isStepforgeError(e)) throw e;
          result = { errors: [e] };
        }
      } else {
        result = loadDocument(await readDocumentFile(io, file), { file, level: 'topology' });
      }
    }
    if (result.errors.length > 0 || result.graph === undefined) return reportErrors(io, result.errors, json);
    io.out(renderGraph(result.graph, format));
    return EXIT_OK;
  },
};
export default graph;

function chooseFormat(json: boolean | undefined, format: string | undefined): Format {
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown --format '${format}' (expected ${FORMATS.join(', ')})\nUsage: stepforge ${USAGE}`);
  }
  if (json && format !== undefined && format !== 'json')
    throw new UsageError(`--json conflicts with --format ${format}\nUsage: stepforge ${USAGE}`);
  return json ? 'json' : ((format ?? 'text') as Format);
}

/** The graph in one of the output formats (always newline-terminated). */
export function renderGraph(g: GraphView, format: Exclude<Format, 'kortecx'>): string {
  switch (format) {
    case 'json': {
      // DSL graphs may carry extra fields (e.g. inferred `dependencies`); keep them after nodes/edges.
      const { nodes: _n, edges: _e, ...extra } = g as GraphView & Record<string, unknown>;
      return JSON.stringify({ ...graphViewToJson(g), ...extra }) + '\n';
    }
    case 'mermaid':
      return renderMermaid(g);
    case 'dot':
      return renderDot(g);
    case 'text':
      return renderText(g);
  }
}

function renderText(g: GraphView): string {
  const width = Math.max(6, ...g.nodes.map((n) => n.handle.length));
  const lines = [`${g.nodes.length} step(s), ${g.edges.length} edge(s)`, 'steps:'];
  g.nodes.forEach((n, i) => {
    const tools = n.tools.length > 0 ? '  ' + n.tools.map((t) => '@' + t).join(' ') : '';
    const parent = n.parent !== undefined ? `  (in ${n.parent})` : '';
    // A DSL step's output name (its canvas node id), shown only when it is not the step's own name.
    const output = n.output !== undefined && n.output !== n.handle ? `  -> ${n.output}` : '';
    lines.push(`  ${String(i).padStart(3)}  ${n.handle.padEnd(width)}  ${n.kind}${tools}${output}${parent}`);
  });
  lines.push('edges:');
  for (const [p, c] of g.edges) lines.push(`  ${g.nodes[p]!.handle} > ${g.nodes[c]!.handle}`);
  return lines.join('\n') + '\n';
}
