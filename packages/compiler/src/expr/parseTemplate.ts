import type { CompareOp, Expr, ExprPart, LiteralExpr, PathExpr, PathRoot, Template, TextPart } from './ExpressionAst.js';
import { expressionError, isIdentPart, isIdentStart, lexExpression, type Token } from './lexExpression.js';

const COMPARE_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);

/**
 * Parses a template string: literal text with `${ … }` expressions. `$${` is an escaped literal `${`.
 * Throws a StepforgeError with code `expression` whose `details.offset` indexes `text`.
 */
export function parseTemplate(text: string): Template {
  return parseTemplateWith(text, true);
}

/** parseTemplate with every expression lexed and parsed (no simplePath): what simplePath is tested against. */
export function parseTemplateByTokens(text: string): Template {
  return parseTemplateWith(text, false);
}

function parseTemplateWith(text: string, simplePaths: boolean): Template {
  // Nodes built by the helpers below, on `{}` and `new Array()`: the templates live as long as the
  // IR, and V8 pretenures the allocation site of a literal whose objects outlive a scavenge (see textPart).
  const parts = new Array<TextPart | ExprPart>();
  let buf = '';
  let bufStart = 0;
  let i = 0;
  while (i < text.length) {
    // Literal text up to the next `$` is copied in one piece.
    const dollar = text.indexOf('$', i);
    const stop = dollar < 0 ? text.length : dollar;
    if (stop > i) {
      if (buf === '') bufStart = i;
      buf += text.slice(i, stop);
      i = stop;
      continue;
    }
    if (text.startsWith('$${', i)) {
      if (buf === '') bufStart = i;
      buf += '${';
      i += 3;
      continue;
    }
    if (text.startsWith('${', i)) {
      if (buf !== '') parts.push(textPart(buf, bufStart));
      buf = '';
      const simple = simplePaths ? simplePath(text, i + 2) : undefined;
      if (simple !== undefined) {
        parts.push(exprPart(simple, i, simpleClose + 1));
        i = simpleClose + 1;
        bufStart = i;
        continue;
      }
      const { tokens, close } = lexExpression(text, i + 2);
      if (close < 0) throw expressionError("unterminated '${': missing '}'", i, 2);
      const expr = new Parser(tokens, i + 2).parseWhole();
      parts.push(exprPart(expr, i, close + 1));
      i = close + 1;
      bufStart = i;
      continue;
    }
    if (buf === '') bufStart = i;
    buf += text[i];
    i++;
  }
  if (buf !== '') parts.push(textPart(buf, bufStart));
  const template = {} as { -readonly [K in keyof Template]: Template[K] };
  template.kind = 'template';
  template.text = text;
  template.parts = parts;
  template.whole = parts.length === 1 && parts[0]!.kind === 'expr';
  return template;
}

/**
 * A template's literal text. Nodes are assigned onto `{}` rather than written as literals with
 * fields: V8 pretenures the allocation site of a literal whose objects outlive a scavenge (a
 * document's templates live as long as its IR), and pretenured objects fill the old space until a
 * mark-compact, on fresh pages each time (see docs/performance.md). The key order is the literal's.
 */
function textPart(value: string, offset: number): TextPart {
  const part = {} as { -readonly [K in keyof TextPart]: TextPart[K] };
  part.kind = 'text';
  part.value = value;
  part.offset = offset;
  return part;
}

/** One `${ … }` of a template (see textPart). */
function exprPart(expr: Expr, offset: number, end: number): ExprPart {
  const part = {} as { -readonly [K in keyof ExprPart]: ExprPart[K] };
  part.kind = 'expr';
  part.expr = expr;
  part.offset = offset;
  part.end = end;
  return part;
}

/** A path node as simplePath reads it (see textPart); `step` undefined for an input path. */
function pathNode(
  step: string | undefined,
  segments: readonly (string | number)[],
  implicitInput: boolean,
  offset: number,
  length: number,
): PathExpr {
  const root = {} as { kind: 'input' | 'step'; step?: string };
  root.kind = step === undefined ? 'input' : 'step';
  if (step !== undefined) root.step = step;
  const node = {} as { -readonly [K in keyof PathExpr]: PathExpr[K] };
  node.kind = 'path';
  node.root = root as PathRoot;
  node.segments = segments;
  node.implicitInput = implicitInput;
  node.offset = offset;
  node.length = length;
  return node;
}

/** Where the `}` after the last path simplePath read is. */
let simpleClose = -1;

/**
 * The common expression, a dotted path alone between the braces (`${ steps.plan.output }`,
 * `${ input.topic }`, `${ topic }`), read straight off the text: the node the lexer and the parser
 * would build, without their tokens. Anything else (indices, brackets, operators, literals, spaces
 * inside the path, a `steps.` path that is not `steps.<name>.output`) is left to them, undefined here.
 * Sets simpleClose to the offset of the closing brace.
 */
function simplePath(text: string, from: number): PathExpr | undefined {
  let i = from;
  while (isSpace(text.charCodeAt(i))) i++;
  const offset = i;
  const names: string[] = [];
  for (;;) {
    if (!isIdentStart(text.charCodeAt(i))) return undefined;
    const start = i;
    i++;
    while (isIdentPart(text.charCodeAt(i))) i++;
    names.push(text.slice(start, i));
    if (text.charCodeAt(i) !== 46) break; // '.'
    i++;
  }
  const length = i - offset;
  while (isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 125) return undefined; // '}'
  simpleClose = i;
  const first = names[0]!;
  if (first === 'input') return pathNode(undefined, names.slice(1), false, offset, length);
  if (first === 'steps') {
    if (names.length < 3 || names[2] !== 'output') return undefined;
    return pathNode(names[1]!, names.slice(3), false, offset, length);
  }
  // `true`, `false` and `null` alone are literals.
  if (names.length === 1 && (first === 'true' || first === 'false' || first === 'null')) return undefined;
  return pathNode(undefined, names, true, offset, length);
}

/** Whitespace between tokens (the lexer's). */
function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Parses a bare expression (the inside of `${ }`, e.g. a `condition:` without the braces). */
export function parseExpression(text: string): Expr {
  const { tokens, close } = lexExpression(text, 0);
  if (close >= 0) throw expressionError("unexpected '}'", close);
  return new Parser(tokens, 0).parseWhole();
}

/** A `${` that is not the escaped `$${`. A literal in the function would be a new RegExp per call. */
const EXPRESSION_OPEN = /(^|[^$])\$\{/;

/** True when the text contains at least one `${ }` (ignoring escaped `$${`). */
export function hasExpression(text: string): boolean {
  // The plain scan first: most strings a document holds have no `${` at all.
  return text.includes('${') && EXPRESSION_OPEN.test(text);
}

/**
 * The text a string without expressions stands for: each escaped `$${` is the literal `${` it
 * writes, as parseTemplate reads it. Lowering emits such strings as they are, so the escape has to
 * be undone here rather than by a template evaluation that never runs.
 */
export function literalText(text: string): string {
  return text.includes('$${') ? text.replaceAll('$${', '${') : text;
}

/** A literal node starting at token `t`. */
function literal(t: Token, value: LiteralExpr['value'], length = t.length): LiteralExpr {
  return { kind: 'literal', value, offset: t.offset, length };
}

/** Recursive-descent parser over the token list; each method is headed by the rule it implements. */
class Parser {
  private pos = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly start: number,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    const t = this.tokens[this.pos]!;
    if (t.kind !== 'eof') this.pos++;
    return t;
  }

  private expect(kind: Token['kind'], what: string): Token {
    const t = this.peek();
    if (t.kind !== kind) throw this.unexpected(t, what);
    return this.next();
  }

  private unexpected(t: Token, expected: string): Error {
    if (t.kind === 'eof') return expressionError(`unexpected end of expression, expected ${expected}`, t.offset, 1);
    return expressionError(
      `unexpected '${String(t.kind === 'string' ? JSON.stringify(t.value) : t.value)}', expected ${expected}`,
      t.offset,
      t.length,
    );
  }

  /** Whole : Expression EOF */
  parseWhole(): Expr {
    if (this.peek().kind === 'eof') throw expressionError('empty expression', this.start === 0 ? 0 : this.start - 2, 2);
    const e = this.parseOr();
    const t = this.peek();
    if (t.kind !== 'eof') throw this.unexpected(t, "an operator or '}'");
    return e;
  }

  /** OrExpr : AndExpr ( '||' AndExpr )* */
  private parseOr(): Expr {
    let left = this.parseAnd();
    while (this.peek().kind === '||') {
      this.next();
      const right = this.parseAnd();
      left = { kind: 'or', left, right, offset: left.offset, length: right.offset + right.length - left.offset };
    }
    return left;
  }

  /** AndExpr : Comparison ( '&&' Comparison )* */
  private parseAnd(): Expr {
    let left = this.parseComparison();
    while (this.peek().kind === '&&') {
      this.next();
      const right = this.parseComparison();
      left = { kind: 'and', left, right, offset: left.offset, length: right.offset + right.length - left.offset };
    }
    return left;
  }

  /** Comparison : Operand ( CompareOp Operand )?   — comparisons do not chain */
  private parseComparison(): Expr {
    const left = this.parseOperand();
    const t = this.peek();
    if (!COMPARE_OPS.has(t.kind)) return left;
    this.next();
    const right = this.parseOperand();
    if (COMPARE_OPS.has(this.peek().kind)) {
      throw expressionError('comparisons cannot be chained; use && between them', this.peek().offset, this.peek().length);
    }
    return {
      kind: 'compare',
      op: t.kind as CompareOp,
      left,
      right,
      offset: left.offset,
      length: right.offset + right.length - left.offset,
    };
  }

  /** Operand : Primary ( '|' 'default' Literal )* */
  private parseOperand(): Expr {
    let e = this.parsePrimary();
    while (this.peek().kind === '|') {
      this.next();
      const kw = this.peek();
      if (kw.kind !== 'ident' || kw.value !== 'default') throw this.unexpected(kw, "'default' after '|'");
      this.next();
      const fallback = this.parseLiteral();
      if (!fallback) throw this.unexpected(this.peek(), "a literal after 'default'");
      e = { kind: 'default', expr: e, fallback, offset: e.offset, length: fallback.offset + fallback.length - e.offset };
    }
    return e;
  }

  /** Primary : Literal | Path | '(' Expression ')' */
  private parsePrimary(): Expr {
    const t = this.peek();
    if (t.kind === '(') {
      this.next();
      const inner = this.parseOr();
      const close = this.expect(')', "')'");
      // Widen the node to cover the parentheses so locations underline what the author wrote.
      return { ...inner, offset: t.offset, length: close.offset + 1 - t.offset };
    }
    const lit = this.parseLiteral();
    if (lit) return lit;
    if (t.kind === 'ident') return this.parsePath();
    throw this.unexpected(t, 'a path or a literal');
  }

  /** Literal : String | Number | 'true' | 'false' | 'null' | '{' '}' | '[' ']' */
  private parseLiteral(): LiteralExpr | undefined {
    const t = this.peek();
    switch (t.kind) {
      case 'string':
      case 'number':
        this.next();
        return literal(t, t.value);
      case 'ident':
        if (t.value === 'true' || t.value === 'false' || t.value === 'null') {
          // `true.x` would be a path into input.true; keywords are only literals when not followed by a segment.
          const after = this.tokens[this.pos + 1];
          if (after?.kind === '.' || after?.kind === '[') return undefined;
          this.next();
          return literal(t, t.value === 'null' ? null : t.value === 'true');
        }
        return undefined;
      case '{': {
        this.next();
        const close = this.expect('}', "'}' (only the empty object {} is a literal)");
        return literal(t, {}, close.offset + 1 - t.offset);
      }
      case '[': {
        this.next();
        const close = this.expect(']', "']' (only the empty array [] is a literal)");
        return literal(t, [], close.offset + 1 - t.offset);
      }
      default:
        return undefined;
    }
  }

  /** Path : Ident ( '.' ( Ident | Index ) | '[' ( Index | String ) ']' )* */
  private parsePath(): PathExpr {
    const first = this.next();
    const names: (string | number)[] = [first.value as string];
    let end = first.offset + first.length;
    for (;;) {
      const t = this.peek();
      if (t.kind === '.') {
        this.next();
        const seg = this.peek();
        if (seg.kind !== 'ident' && seg.kind !== 'number') throw this.unexpected(seg, "a field name or index after '.'");
        this.next();
        names.push(seg.value);
        end = seg.offset + seg.length;
      } else if (t.kind === '[') {
        this.next();
        const seg = this.peek();
        if (seg.kind === 'number') {
          if (!Number.isInteger(seg.value) || (seg.value as number) < 0) {
            throw expressionError('an index must be a non-negative integer', seg.offset, seg.length);
          }
        } else if (seg.kind !== 'string') {
          throw this.unexpected(seg, 'an index or a quoted field name');
        }
        this.next();
        const close = this.expect(']', "']'");
        names.push(seg.value);
        end = close.offset + 1;
      } else {
        break;
      }
    }
    const offset = first.offset;
    const length = end - offset;
    if (names[0] === 'input') {
      return { kind: 'path', root: { kind: 'input' }, segments: names.slice(1), implicitInput: false, offset, length };
    }
    if (names[0] === 'steps') {
      const step = names[1];
      if (typeof step !== 'string') {
        throw expressionError('expected a step name after steps. (steps.<name>.output)', offset, length);
      }
      if (names[2] !== 'output') {
        throw expressionError(`step results are read as steps.${step}.output`, offset, length);
      }
      return { kind: 'path', root: { kind: 'step', step }, segments: names.slice(3), implicitInput: false, offset, length };
    }
    return { kind: 'path', root: { kind: 'input' }, segments: names, implicitInput: true, offset, length };
  }
}
