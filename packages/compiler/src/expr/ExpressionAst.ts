// The `${ }` expression language's AST: plain readonly data. Offsets are 0-based indices into the
// template text (the decoded YAML scalar), so a caller can map them back to file:line:col.

/** A JSON literal the language can spell: strings, numbers, booleans, null, `{}` and `[]`. */
export type LiteralValue = string | number | boolean | null | Readonly<Record<string, never>> | readonly never[];

/** Where a path starts: the run input (also for bare paths) or one step's output. */
export type PathRoot = { readonly kind: 'input' } | { readonly kind: 'step'; readonly step: string };

interface NodeBase {
  /** Offset of the node's first character in the template text. */
  readonly offset: number;
  readonly length: number;
}

/** `input.a.b`, `steps.x.output.items[0]`, or a bare `a.b` (read from input). */
export interface PathExpr extends NodeBase {
  readonly kind: 'path';
  readonly root: PathRoot;
  /** Segments after the root (after `steps.<name>.output` for steps). */
  readonly segments: readonly (string | number)[];
  /** True for a bare path such as `topic` that implicitly reads `input.topic`. */
  readonly implicitInput: boolean;
}

/** A literal value. */
export interface LiteralExpr extends NodeBase {
  readonly kind: 'literal';
  readonly value: LiteralValue;
}

/** `expr | default <literal>`: the literal when expr is missing or null. */
export interface DefaultExpr extends NodeBase {
  readonly kind: 'default';
  readonly expr: Expr;
  readonly fallback: LiteralExpr;
}

/** `a && b` (a boolean) and `a || b` (coalesce: a when truthy, else b). */
export interface LogicalExpr extends NodeBase {
  readonly kind: 'and' | 'or';
  readonly left: Expr;
  readonly right: Expr;
}

/** Comparison operators. */
export type CompareOp = '==' | '!=' | '<' | '>' | '<=' | '>=';

/** `a == b` and friends; always a boolean. */
export interface CompareExpr extends NodeBase {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly left: Expr;
  readonly right: Expr;
}

/** Any expression node. */
export type Expr = PathExpr | LiteralExpr | DefaultExpr | LogicalExpr | CompareExpr;

/** A literal run of text in a template. */
export interface TextPart {
  readonly kind: 'text';
  readonly value: string;
  readonly offset: number;
}

/** One `${ … }` in a template; offset is that of `$`, end is just past `}`. */
export interface ExprPart {
  readonly kind: 'expr';
  readonly expr: Expr;
  readonly offset: number;
  readonly end: number;
}

/** A parsed template string. */
export interface Template {
  readonly kind: 'template';
  readonly text: string;
  readonly parts: readonly (TextPart | ExprPart)[];
  /** The whole string is exactly one `${ }`: its value keeps its type instead of becoming a string. */
  readonly whole: boolean;
}
