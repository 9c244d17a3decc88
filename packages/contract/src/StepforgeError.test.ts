import { describe, it, expect } from 'vitest';
import { StepforgeError, isStepforgeError } from './StepforgeError.js';
import { SourceText } from './SourceText.js';

describe('Class: SourceText', () => {
  describe('Method: position', () => {
    it('maps offsets to 1-based line and column', () => {
      const s = new SourceText('ab\ncd\n');
      expect(s.position(0)).toEqual({ line: 1, column: 1 });
      expect(s.position(3)).toEqual({ line: 2, column: 1 });
      expect(s.position(4)).toEqual({ line: 2, column: 2 });
      expect(s.lineText(2)).toBe('cd');
    });
    it('gives a byte order mark no column, so carets line up with what an editor shows', () => {
      const s = new SourceText('\uFEFFab: x\ncd\n');
      expect(s.position(0)).toEqual({ line: 1, column: 1 });
      expect(s.position(1)).toEqual({ line: 1, column: 1 });
      expect(s.position(5)).toEqual({ line: 1, column: 5 });
      expect([s.lineText(1), s.lineLength(1)]).toEqual(['ab: x', 5]);
      expect(s.position(7)).toEqual({ line: 2, column: 1 });
    });
  });
});

describe('Class: StepforgeError', () => {
  describe('Method: toString', () => {
    it('prints the class, location and a caret excerpt', () => {
      const e = new StepforgeError('parse', "unexpected character '%'", {
        location: { file: 'a.chain.yaml', line: 1, column: 8 },
        source: 'chain: a % b',
      });
      expect(e.toString()).toBe("error[parse] a.chain.yaml:1:8: unexpected character '%'\n  |\n1 | chain: a % b\n  |        ^");
      expect(e.toJSON()).toEqual({ class: 'parse', message: "unexpected character '%'", line: 1, column: 8, file: 'a.chain.yaml' });
      expect(isStepforgeError(e)).toBe(true);
      expect(isStepforgeError(new Error('x'))).toBe(false);
    });
  });
});
