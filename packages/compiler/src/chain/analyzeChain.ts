import type { ChainNode } from './ChainAst.js';
import { buildChainGraph, findEdgeOperator, type ChainGraph } from './buildChainGraph.js';
import { didYouMean } from '@stepforge/contract';
import { findCycle } from '../graph/findCycle.js';
import { parseChain } from './parseChain.js';

const NON_MODEL_KINDS = new Set(['tool', 'connector', 'pure']);

/** A chain error located by offsets into the expression (the caller maps them to file positions). */
export interface ChainExpressionError {
  readonly code: 'parse' | 'unknown_handle' | 'cycle' | 'agentic_non_model';
  readonly message: string;
  readonly offset: number;
  readonly length: number;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The outcome of the topology checks on one chain expression. */
export interface ChainAnalysis {
  readonly ast?: ChainNode;
  /** Present whenever the expression parsed (even if other topology checks failed). */
  readonly graph?: ChainGraph;
  readonly errors: readonly ChainExpressionError[];
}

/** How the topology checks see the task map: which handles exist and what kind each is. */
export interface ChainTaskLookup {
  /** The task kind of a handle, or undefined when no task has that handle. */
  kindOf(handle: string): string | undefined;
  /** Every defined handle, in definition order (for did-you-mean). */
  readonly handles: Iterable<string>;
}

/**
 * Runs the topology checks of DESIGN §1 on a chain expression: `parse` (stops here), then
 * `unknown_handle` (each unknown handle once, with did-you-mean), `agentic_non_model` (an `@` on a
 * step that is not a model step) and `cycle` (self-loops too, with the cycle's path).
 */
export function analyzeChain(expression: string, tasks: ChainTaskLookup): ChainAnalysis {
  const parsed = parseChain(expression);
  if (!parsed.ok) {
    const { reason, message, offset, length } = parsed.error;
    return { errors: [{ code: 'parse', message, offset, length, details: { reason } }] };
  }
  const ast = parsed.ast;
  const graph = buildChainGraph(ast);
  const errors: ChainExpressionError[] = [];
  for (const node of graph.nodes) {
    const kind = tasks.kindOf(node.handle);
    if (kind === undefined) {
      const suggestion = didYouMean(node.handle, tasks.handles);
      errors.push({
        code: 'unknown_handle',
        // No close match: the handle is most likely a step not written yet.
        message: `unknown task handle '${node.handle}'; ${suggestion === undefined ? 'define it under tasks:' : `did you mean '${suggestion}'?`}`,
        offset: node.start,
        length: node.handle.length,
        details: { handle: node.handle, ...(suggestion === undefined ? {} : { suggestion }) },
      });
    } else if (node.tools.length > 0 && NON_MODEL_KINDS.has(kind)) {
      // Only known non-model kinds: a misspelt kind is reported by the task check instead.
      errors.push({
        code: 'agentic_non_model',
        message: `'${node.handle}' is a ${kind} step; only model steps can be granted tools (${node.tools.map((t) => '@' + t).join(' ')})`,
        offset: node.firstToolOffset ?? node.start,
        length: 1,
        details: { handle: node.handle, kind, tools: node.tools },
      });
    }
  }
  const cycle = findCycle(graph.nodes.length, graph.edges);
  if (cycle !== undefined) {
    const names = cycle.map((i) => graph.nodes[i]!.handle);
    const from = cycle[cycle.length - 2]!;
    const to = cycle[cycle.length - 1]!;
    const offset = findEdgeOperator(ast, graph, from, to) ?? graph.nodes[to]!.start;
    errors.push({
      code: 'cycle',
      message: cycle.length === 2 ? `cycle: '${names[0]}' depends on itself (${names.join(' > ')})` : `cycle: ${names.join(' > ')}`,
      offset,
      length: 1,
      details: { path: names },
    });
  }
  return { ast, graph, errors };
}
