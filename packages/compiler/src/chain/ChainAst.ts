/** A handle use in a chain expression: `name@tool@tool`, with offsets into the expression text. */
export interface ChainHandleNode {
  readonly kind: 'handle';
  readonly name: string;
  /** Tool tags as written on this use, de-duplicated in first-appearance order (`p@x@x` is `p@x`). */
  readonly tools: readonly string[];
  /** Offset of each tag's `@` (parallel to `tools`). */
  readonly toolOffsets: readonly number[];
  /** Offset of the handle's first character. */
  readonly start: number;
  /** Offset just past the last character of the handle or its last tag. */
  readonly end: number;
}

/** `A > B > C`: left-associative sequence, flattened to its operands. */
export interface ChainSequenceNode {
  readonly kind: 'sequence';
  readonly items: readonly ChainNode[];
  /** Offset of each `>` (`opOffsets[i]` sits between `items[i]` and `items[i + 1]`). */
  readonly opOffsets: readonly number[];
}

/** `A & B & C` or `A | B | C`: left-associative parallel merge, flattened to its operands. */
export interface ChainParallelNode {
  readonly kind: 'parallel';
  /** `&` binds tighter than `|`; both mean the same merge, so only the parse tree differs. */
  readonly op: '&' | '|';
  readonly items: readonly ChainNode[];
}

/** `[ … ]`: grouping; adds no edges of its own. */
export interface ChainGroupNode {
  readonly kind: 'group';
  readonly body: ChainNode;
  /** Offset of `[`. */
  readonly start: number;
  /** Offset just past `]`. */
  readonly end: number;
}

/** A node of a chain expression's syntax tree. */
export type ChainNode = ChainHandleNode | ChainSequenceNode | ChainParallelNode | ChainGroupNode;

/** Prints a syntax tree fully parenthesised, e.g. `a > b & c` → `((a > b) & c)`; shows how precedence grouped it. */
export function formatChainNode(node: ChainNode): string {
  switch (node.kind) {
    case 'handle':
      return node.name + node.tools.map((t) => '@' + t).join('');
    case 'group':
      return `[${formatChainNode(node.body)}]`;
    case 'sequence':
      return `(${node.items.map(formatChainNode).join(' > ')})`;
    case 'parallel':
      return `(${node.items.map(formatChainNode).join(` ${node.op} `)})`;
  }
}
