/** Token kinds of the chain language. */
export enum ChainTokenKind {
  Name = 0,
  At = 1,
  LBracket = 2,
  RBracket = 3,
  Gt = 4,
  Amp = 5,
  Pipe = 6,
  Eof = 7,
  /** A character that starts no token; the parser reports it as `unexpected character`. */
  Invalid = 8,
}

const KIND_BY_CHAR: Record<number, ChainTokenKind> = {
  0x40: ChainTokenKind.At,
  0x5b: ChainTokenKind.LBracket,
  0x5d: ChainTokenKind.RBracket,
  0x3e: ChainTokenKind.Gt,
  0x26: ChainTokenKind.Amp,
  0x7c: ChainTokenKind.Pipe,
};

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isNameContinue(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

const UNICODE_SPACE = /\s/;

/** True for every character JavaScript's `\s` matches (ASCII fast path first). */
export function isChainWhitespace(c: number): boolean {
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
  return c > 0x7f && UNICODE_SPACE.test(String.fromCharCode(c));
}

/**
 * Scans a chain expression one token at a time without allocating token objects: after `next()`
 * the current token is `kind` spanning `[start, end)`. Whitespace between tokens is skipped.
 */
export class ChainLexer {
  kind: ChainTokenKind = ChainTokenKind.Eof;
  start = 0;
  end = 0;

  constructor(readonly text: string) {}

  /** Advances to the next token and returns its kind. */
  next(): ChainTokenKind {
    const text = this.text;
    const n = text.length;
    let i = this.end;
    while (i < n && isChainWhitespace(text.charCodeAt(i))) i++;
    this.start = i;
    if (i >= n) {
      this.end = i;
      return (this.kind = ChainTokenKind.Eof);
    }
    const c = text.charCodeAt(i);
    if (isNameStart(c)) {
      i++;
      while (i < n && isNameContinue(text.charCodeAt(i))) i++;
      this.end = i;
      return (this.kind = ChainTokenKind.Name);
    }
    const k = KIND_BY_CHAR[c];
    if (k !== undefined) {
      this.end = i + 1;
      return (this.kind = k);
    }
    // One code point, so a surrogate pair is reported as one character.
    this.end = i + (c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1);
    return (this.kind = ChainTokenKind.Invalid);
  }

  /** The current token's text. */
  value(): string {
    return this.text.slice(this.start, this.end);
  }
}
