import type { ChainGroupNode, ChainHandleNode, ChainNode, ChainParallelNode, ChainSequenceNode } from './ChainAst.js';
import { ChainLexer, ChainTokenKind } from './ChainLexer.js';

/** Which kind of syntax error a chain expression has (the `parse` error class's sub-kind). */
export type ChainSyntaxReason =
  | 'empty_expression'
  | 'empty_group'
  | 'unbalanced_bracket'
  | 'stray_at'
  | 'dangling_at'
  | 'unexpected_character'
  | 'missing_operand'
  | 'missing_operator'
  | 'too_deep';

/** A syntax error with offsets into the expression text (callers map them to file line:column). */
export interface ChainSyntaxError {
  readonly reason: ChainSyntaxReason;
  readonly message: string;
  readonly offset: number;
  readonly length: number;
}

/** The outcome of parsing: a syntax tree, or the first syntax error. */
export type ParseChainResult = { readonly ok: true; readonly ast: ChainNode } | { readonly ok: false; readonly error: ChainSyntaxError };

/** Brackets nested deeper than this are refused, so later tree walks cannot overflow the stack. */
export const MAX_CHAIN_NESTING = 512;

type Op = '[' | '>' | '&' | '|';
const PRECEDENCE: Record<Op, number> = { '[': 0, '|': 1, '&': 2, '>': 3 };

const TOKEN_TEXT: Record<ChainTokenKind, string> = {
  [ChainTokenKind.Name]: 'a handle',
  [ChainTokenKind.At]: "'@'",
  [ChainTokenKind.LBracket]: "'['",
  [ChainTokenKind.RBracket]: "']'",
  [ChainTokenKind.Gt]: "'>'",
  [ChainTokenKind.Amp]: "'&'",
  [ChainTokenKind.Pipe]: "'|'",
  [ChainTokenKind.Eof]: 'the end of the expression',
  [ChainTokenKind.Invalid]: 'a character',
};

const NO_TAGS: string[] = [];
const NO_OFFSETS: number[] = [];

class SyntaxFailure {
  constructor(readonly error: ChainSyntaxError) {}
}

function fail(reason: ChainSyntaxReason, message: string, offset: number, length = 1): never {
  throw new SyntaxFailure({ reason, message: `${message}`, offset, length });
}

// Mutable twins of the AST types, used only while building; the result is handed out as readonly.
type MutableHandle = { kind: 'handle'; name: string; tools: string[]; toolOffsets: number[]; start: number; end: number };
type MutableSequence = { kind: 'sequence'; items: ChainNode[]; opOffsets: number[] };
type MutableParallel = { kind: 'parallel'; op: '&' | '|'; items: ChainNode[] };

/**
 * Parses a chain expression. Grammar (tightest first; every binary operator left-associative):
 *
 *     alternation := conjunction ( '|' conjunction )*
 *     conjunction := sequence ( '&' sequence )*
 *     sequence    := primary ( '>' primary )*
 *     primary     := '[' alternation ']' | NAME ( '@' NAME )*
 *     NAME        := [A-Za-z_][A-Za-z0-9_-]*        (whitespace allowed between any two tokens)
 *
 * Implemented as operator precedence (shunting-yard) so that deep inputs never recurse. Returns the
 * first syntax error instead of throwing.
 */
export function parseChain(text: string): ParseChainResult {
  try {
    return { ok: true, ast: parseOrThrow(text) };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, error: e.error };
    throw e;
  }
}

function parseOrThrow(text: string): ChainNode {
  const lexer = new ChainLexer(text);
  const operands: ChainNode[] = [];
  const ops: Op[] = [];
  const opOffsets: number[] = [];
  let depth = 0;
  let expectOperand = true;
  let prev: ChainTokenKind | undefined;
  let prevStart = 0;
  let lastHandle: MutableHandle | undefined;

  // Pops one operator and its two operands, flattening runs of the same operator into one node.
  const reduce = () => {
    const op = ops.pop()! as '>' | '&' | '|';
    const at = opOffsets.pop()!;
    const right = operands.pop()!;
    const left = operands.pop()!;
    if (op === '>') {
      if (left.kind === 'sequence') {
        (left as MutableSequence).items.push(right);
        (left as MutableSequence).opOffsets.push(at);
        operands.push(left);
      } else {
        const seq: MutableSequence = { kind: 'sequence', items: [left, right], opOffsets: [at] };
        operands.push(seq as ChainSequenceNode);
      }
    } else if (left.kind === 'parallel' && left.op === op) {
      (left as MutableParallel).items.push(right);
      operands.push(left);
    } else {
      const par: MutableParallel = { kind: 'parallel', op, items: [left, right] };
      operands.push(par as ChainParallelNode);
    }
  };

  const unexpected = () => fail('unexpected_character', `unexpected character '${lexer.value()}'`, lexer.start, lexer.end - lexer.start);
  const lastOp = () => (ops.length > 0 ? ops[ops.length - 1] : undefined);

  for (;;) {
    const k = lexer.next();
    const start = lexer.start;
    if (k === ChainTokenKind.Invalid) unexpected();
    if (expectOperand) {
      switch (k) {
        case ChainTokenKind.Name: {
          // Most handles carry no tags: share one empty list until a tag arrives.
          const h: MutableHandle = { kind: 'handle', name: lexer.value(), tools: NO_TAGS, toolOffsets: NO_OFFSETS, start, end: lexer.end };
          operands.push(h as ChainHandleNode);
          lastHandle = h;
          expectOperand = false;
          break;
        }
        case ChainTokenKind.LBracket:
          if (depth >= MAX_CHAIN_NESTING) fail('too_deep', `brackets nested more than ${MAX_CHAIN_NESTING} levels deep`, start);
          depth++;
          ops.push('[');
          opOffsets.push(start);
          break;
        case ChainTokenKind.RBracket:
          if (!ops.includes('[')) fail('unbalanced_bracket', "unbalanced bracket: ']' has no matching '['", start);
          if (prev === ChainTokenKind.LBracket)
            fail('empty_group', "empty group: '[ ]' contains no steps", prevStart, start - prevStart + 1);
          fail('missing_operand', `missing operand: expected a handle or '[' after '${text[prevStart]}', found ']'`, start);
          break;
        case ChainTokenKind.Gt:
        case ChainTokenKind.Amp:
        case ChainTokenKind.Pipe:
          if (prev === undefined || prev === ChainTokenKind.LBracket) {
            fail('missing_operand', `missing operand: '${lexer.value()}' has no step on its left`, start);
          }
          fail('missing_operand', `missing operand: expected a handle or '[' after '${text[prevStart]}', found '${lexer.value()}'`, start);
          break;
        case ChainTokenKind.At:
          fail('stray_at', "stray '@': a tool tag must follow a handle, as in 'plan@web-search'", start);
          break;
        case ChainTokenKind.Eof:
          if (prev === undefined) fail('empty_expression', 'empty expression: the chain names no steps', 0, 0);
          if (prev === ChainTokenKind.LBracket) fail('unbalanced_bracket', "unbalanced bracket: '[' is never closed", prevStart);
          fail('missing_operand', `missing operand: '${text[prevStart]}' has no step on its right`, prevStart);
      }
    } else {
      switch (k) {
        case ChainTokenKind.At: {
          const atOffset = start;
          if (lastHandle === undefined) {
            fail('stray_at', "stray '@': tool tags attach to a handle, not to a bracketed group", atOffset);
          }
          const t = lexer.next();
          if (t === ChainTokenKind.Invalid) unexpected();
          if (t !== ChainTokenKind.Name) {
            fail('dangling_at', `dangling '@': expected a tool name after '@', found ${TOKEN_TEXT[t]}`, atOffset);
          }
          const tool = lexer.value();
          if (lastHandle.tools === NO_TAGS) {
            lastHandle.tools = [];
            lastHandle.toolOffsets = [];
          }
          if (!lastHandle.tools.includes(tool)) {
            lastHandle.tools.push(tool);
            lastHandle.toolOffsets.push(atOffset);
          }
          lastHandle.end = lexer.end;
          break;
        }
        case ChainTokenKind.Gt:
        case ChainTokenKind.Amp:
        case ChainTokenKind.Pipe: {
          const op = lexer.value() as '>' | '&' | '|';
          const p = PRECEDENCE[op];
          for (let top = lastOp(); top !== undefined && top !== '[' && PRECEDENCE[top] >= p; top = lastOp()) reduce();
          ops.push(op);
          opOffsets.push(start);
          expectOperand = true;
          lastHandle = undefined;
          break;
        }
        case ChainTokenKind.RBracket: {
          for (let top = lastOp(); top !== undefined && top !== '['; top = lastOp()) reduce();
          if (ops.length === 0) fail('unbalanced_bracket', "unbalanced bracket: ']' has no matching '['", start);
          ops.pop();
          const open = opOffsets.pop()!;
          depth--;
          const body = operands.pop()!;
          const group: ChainGroupNode = { kind: 'group', body, start: open, end: lexer.end };
          operands.push(group);
          lastHandle = undefined;
          break;
        }
        case ChainTokenKind.Name:
        case ChainTokenKind.LBracket:
          fail(
            'missing_operator',
            `missing operator: expected '>', '&' or '|' before ${k === ChainTokenKind.Name ? `'${lexer.value()}'` : "'['"}`,
            start,
            lexer.end - start,
          );
          break;
        case ChainTokenKind.Eof: {
          while (ops.length > 0) {
            if (lastOp() === '[') fail('unbalanced_bracket', "unbalanced bracket: '[' is never closed", opOffsets[opOffsets.length - 1]!);
            reduce();
          }
          return operands[0]!;
        }
      }
    }
    prev = k;
    prevStart = start;
  }
}
