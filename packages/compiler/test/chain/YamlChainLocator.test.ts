import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { YamlChainLocator } from '../../src/chain/YamlChainLocator.js';

describe('Class: YamlChainLocator', () => {
  describe('Method: offsetInside', () => {
    const text = 'name: t\ntasks:\n  b:\n    kind: pure\n    expr: "1 +"\n';
    const locator = new YamlChainLocator(parseDocument(text, { keepSourceTokens: true }), text);

    it('maps an index inside a quoted scalar to its source offset', () => {
      expect(locator.offsetInside(['tasks', 'b', 'expr'], 2)).toBe(text.indexOf('"1 +"') + 3);
    });

    it("points at the value itself when the error has no position (it used to answer the value's length)", () => {
      expect(locator.offsetInside(['tasks', 'b', 'expr'], undefined)).toBe(text.indexOf('"1 +"'));
      expect(locator.offsetInside(['tasks', 'b', 'kind'], undefined)).toBe(text.indexOf('pure'));
    });
  });
});
