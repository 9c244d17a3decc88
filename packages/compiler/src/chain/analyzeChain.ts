import type { ChainNode } from './ChainAst.js';
import { buildChainGraph, findEdgeOperator, type ChainGraph } from './buildChainGraph.js';
import { agenticNonModel } from '../checks/agenticNonModel.js';
import { chainCycle, dependencyCycle } from '../checks/cycle.js';
import { unknownHandle, withSuggestion } from '../checks/unknownReference.js';
import { parseChain } from './parseChain.js';

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
      errors.push({ ...unknownHandle(withSuggestion(node.handle, tasks.handles)), offset: node.start, length: node.handle.length });
      continue;
    }
    const agentic = agenticNonModel(node.handle, kind, node.tools);
    if (agentic) errors.push({ ...agentic, offset: node.firstToolOffset ?? node.start, length: 1 });
  }
  const cycle = dependencyCycle(graph.nodes.length, graph.edges, (i) => graph.nodes[i]!.handle);
  if (cycle !== undefined) {
    const from = cycle.nodes[cycle.nodes.length - 2]!;
    const to = cycle.nodes[cycle.nodes.length - 1]!;
    const offset = findEdgeOperator(ast, graph, from, to) ?? graph.nodes[to]!.start;
    errors.push({ ...chainCycle(cycle), offset, length: 1 });
  }
  return { ast, graph, errors };
}
