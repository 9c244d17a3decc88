import type { ChainNode } from './ChainAst.js';

/** A node of a chain graph: one per distinct handle, in first-appearance order. */
export interface ChainGraphNode {
  readonly handle: string;
  /** Tool tags from every use of the handle, first appearance first, de-duplicated. */
  readonly tools: readonly string[];
  /** Offsets of the handle's first use in the expression. */
  readonly start: number;
  readonly end: number;
  /** Offset of the first `@` on any use of the handle (for errors about tool grants). */
  readonly firstToolOffset?: number;
}

/** Nodes and edges of a chain expression, before any task is looked up. */
export interface ChainGraph {
  readonly nodes: readonly ChainGraphNode[];
  /** `[parent, child]` node indices, de-duplicated and sorted by (parent, child). */
  readonly edges: readonly (readonly [number, number])[];
}

/** `{entries, exits}` of a sub-expression, as node indices. */
interface Fragment {
  readonly entries: readonly number[];
  readonly exits: readonly number[];
}

type MutableNode = { handle: string; tools: string[]; start: number; end: number; firstToolOffset?: number };

// Edge keys pack (parent, child) into one double so sorting and de-duplication are numeric.
const SHIFT = 2 ** 26;

/**
 * Turns a chain syntax tree into its graph: `A > B` joins every exit of A to every entry of B;
 * `&`/`|` merge fragments (entries and exits concatenated, order kept, duplicates dropped);
 * a handle used twice is the same node, its tool tags unioned in first-appearance order.
 */
export function buildChainGraph(ast: ChainNode): ChainGraph {
  const nodes: MutableNode[] = [];
  const indexOf = new Map<string, number>();
  const keys: number[] = [];
  // One immutable fragment per node, shared by every use of its handle.
  const single: Fragment[] = [];

  const fragment = (node: ChainNode): Fragment => {
    switch (node.kind) {
      case 'handle': {
        let i = indexOf.get(node.name);
        if (i === undefined) {
          i = nodes.length;
          indexOf.set(node.name, i);
          nodes.push({ handle: node.name, tools: [], start: node.start, end: node.end });
          const one = [i];
          single.push({ entries: one, exits: one });
        }
        if (node.tools.length > 0) {
          const n = nodes[i]!;
          for (let t = 0; t < node.tools.length; t++) {
            if (!n.tools.includes(node.tools[t]!)) n.tools.push(node.tools[t]!);
            if (n.firstToolOffset === undefined) n.firstToolOffset = node.toolOffsets[t];
          }
        }
        return single[i]!;
      }
      case 'group':
        return fragment(node.body);
      case 'sequence': {
        const first = fragment(node.items[0]!);
        let exits = first.exits;
        for (let k = 1; k < node.items.length; k++) {
          const next = fragment(node.items[k]!);
          for (const p of exits) for (const c of next.entries) keys.push(p * SHIFT + c);
          exits = next.exits;
        }
        return { entries: first.entries, exits };
      }
      case 'parallel': {
        const parts = node.items.map(fragment);
        return { entries: mergeUnique(parts, 'entries'), exits: mergeUnique(parts, 'exits') };
      }
    }
  };

  fragment(ast);
  const sorted = Float64Array.from(keys).sort();
  const edges: (readonly [number, number])[] = [];
  let last = -1;
  for (const key of sorted) {
    if (key === last) continue;
    last = key;
    const p = Math.floor(key / SHIFT);
    edges.push([p, key - p * SHIFT]);
  }
  return { nodes, edges };
}

/** Concatenates the fragments' entries (or exits) keeping first occurrences; a Set only when the lists are long. */
function mergeUnique(parts: readonly Fragment[], side: 'entries' | 'exits'): number[] {
  let total = 0;
  for (const f of parts) total += f[side].length;
  const out: number[] = [];
  if (total <= 16) {
    for (const f of parts) for (const e of f[side]) if (!out.includes(e)) out.push(e);
    return out;
  }
  const seen = new Set<number>();
  for (const f of parts) {
    for (const e of f[side]) {
      if (!seen.has(e)) {
        seen.add(e);
        out.push(e);
      }
    }
  }
  return out;
}

/**
 * Finds which `>` created the edge `parent → child` (the first one, left to right), for error carets.
 * Only called on the error path, so it simply re-walks the tree.
 */
export function findEdgeOperator(ast: ChainNode, graph: ChainGraph, parent: number, child: number): number | undefined {
  const indexOf = new Map(graph.nodes.map((n, i) => [n.handle, i] as const));
  let found: number | undefined;
  const fragment = (node: ChainNode): Fragment => {
    switch (node.kind) {
      case 'handle': {
        const one = [indexOf.get(node.name)!];
        return { entries: one, exits: one };
      }
      case 'group':
        return fragment(node.body);
      case 'sequence': {
        const first = fragment(node.items[0]!);
        let exits = first.exits;
        for (let k = 1; k < node.items.length; k++) {
          const next = fragment(node.items[k]!);
          if (found === undefined && exits.includes(parent) && next.entries.includes(child)) found = node.opOffsets[k - 1];
          exits = next.exits;
        }
        return { entries: first.entries, exits };
      }
      case 'parallel': {
        const parts = node.items.map(fragment);
        return { entries: [...new Set(parts.flatMap((f) => f.entries))], exits: [...new Set(parts.flatMap((f) => f.exits))] };
      }
    }
  };
  fragment(ast);
  return found;
}
