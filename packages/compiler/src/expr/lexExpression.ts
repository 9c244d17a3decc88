import { StepforgeError } from '@stepforge/contract';

/** Token kinds of the `${ }` language. */
export type TokenKind =
  | 'ident'
  | 'number'
  | 'string'
  | '.'
  | '['
  | ']'
  | '('
  | ')'
  | '{'
  | '}'
  | '|'
  | '||'
  | '&&'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'eof';

/** One token; `value` is the decoded value for strings and numbers, the spelling otherwise. */
export interface Token {
  readonly kind: TokenKind;
  readonly value: string | number;
  readonly offset: number;
  readonly length: number;
}

/** An `expression` error at an offset of the template text (callers map it to file:line:col). */
export function expressionError(message: string, offset: number, length = 1): StepforgeError {
  return new StepforgeError('expression', message, {
    location: { line: 1, column: offset + 1, length },
    details: { offset, length },
  });
}

// Character classes by code rather than by regex: the lexer runs over every expression of a document.
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** [A-Za-z0-9_-]; NaN (past the end) is not. */
export function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c) || c === 45;
}
/** Two-character operators by their first character: `||`, `&&`, `==`, `!=`, `<=`, `>=`. */
const TWO_CHAR: Readonly<Record<string, '||' | '&&' | '==' | '!=' | '<=' | '>='>> = {
  '|': '||',
  '&': '&&',
  '=': '==',
  '!': '!=',
  '<': '<=',
  '>': '>=',
};
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const INDEX = /[0-9]+/y;

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '\\': '\\',
  '/': '/',
  "'": "'",
  '"': '"',
};

function pushToken(tokens: Token[], kind: TokenKind, value: string | number, offset: number, length: number): void {
  tokens.push({ kind, value, offset, length });
}

/**
 * Tokenises `text` from `start` until the `}` that closes the enclosing `${` (depth 0) or the end.
 * Returns the tokens (ending with `eof` at the closing brace) and the offset of that brace, or -1.
 * The lexer runs over the template directly, so a `}` inside a string literal or `{}` is not mistaken
 * for the end of the expression.
 */
export function lexExpression(text: string, start: number): { tokens: Token[]; close: number } {
  const tokens: Token[] = [];
  let i = start;
  let depth = 0;
  while (i < text.length) {
    const c = text[i]!;
    const code = text.charCodeAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '}' && depth === 0) {
      pushToken(tokens, 'eof', '', i, 1);
      return { tokens, close: i };
    }
    const prev = tokens[tokens.length - 1];
    // After a `.` a number is an index segment (`a.0.1` is two indices, not the number 0.1).
    if (isDigit(code) && prev?.kind === '.') {
      INDEX.lastIndex = i;
      const m = INDEX.exec(text)!;
      pushToken(tokens, 'number', Number(m[0]), i, m[0].length);
      i += m[0].length;
      continue;
    }
    if (isDigit(code) || (c === '-' && isDigit(text.charCodeAt(i + 1)))) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) throw expressionError(`malformed number`, i);
      const end = i + m[0].length;
      if (isIdentPart(text.charCodeAt(end)) && text[end] !== '-') {
        throw expressionError(`malformed number '${text.slice(i, end + 1)}'`, i, end + 1 - i);
      }
      pushToken(tokens, 'number', Number(m[0]), i, m[0].length);
      i = end;
      continue;
    }
    if (isIdentStart(code)) {
      let j = i + 1;
      while (j < text.length && isIdentPart(text.charCodeAt(j))) j++;
      pushToken(tokens, 'ident', text.slice(i, j), i, j - i);
      i = j;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      for (;;) {
        if (j >= text.length) throw expressionError('unterminated string literal', i, j - i);
        const d = text[j]!;
        if (d === c) break;
        if (d === '\\') {
          const e = text[j + 1];
          if (e === 'u') {
            const hex = text.slice(j + 2, j + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw expressionError('invalid \\u escape', j, 2);
            value += String.fromCharCode(parseInt(hex, 16));
            j += 6;
            continue;
          }
          const decoded = e === undefined ? undefined : ESCAPES[e];
          if (decoded === undefined) throw expressionError(`invalid escape '\\${e ?? ''}'`, j, 2);
          value += decoded;
          j += 2;
          continue;
        }
        value += d;
        j++;
      }
      pushToken(tokens, 'string', value, i, j + 1 - i);
      i = j + 1;
      continue;
    }
    const two = TWO_CHAR[c];
    if (two !== undefined && text[i + 1] === two[1]) {
      pushToken(tokens, two, two, i, 2);
      i += 2;
      continue;
    }
    if (c === '.' || c === '[' || c === ']' || c === '(' || c === ')' || c === '|' || c === '<' || c === '>') {
      pushToken(tokens, c, c, i, 1);
      i++;
      continue;
    }
    if (c === '{') {
      depth++;
      pushToken(tokens, '{', c, i, 1);
      i++;
      continue;
    }
    if (c === '}') {
      depth--;
      pushToken(tokens, '}', c, i, 1);
      i++;
      continue;
    }
    if (c === '&') throw expressionError(`unexpected '&' (did you mean '&&'?)`, i);
    if (c === '=') throw expressionError(`unexpected '=' (did you mean '=='?)`, i);
    if (c === '!') {
      // `!x` (a negation, which GraphN's expressions do not have either) rather than a mistyped `!=`.
      let j = i + 1;
      while (text[j] === ' ' || text[j] === '\t') j++;
      const next = text.charCodeAt(j);
      if (isIdentStart(next) || text[j] === '(')
        throw expressionError(`unexpected '!': there is no negation; compare instead, e.g. \${ steps.check.output == false }`, i);
      throw expressionError(`unexpected '!' (did you mean '!='?)`, i);
    }
    throw expressionError(`unexpected character '${c}'`, i);
  }
  pushToken(tokens, 'eof', '', text.length, 0);
  return { tokens, close: -1 };
}
