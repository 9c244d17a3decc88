import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildChainGraph, loadChainDocument, loadChainExpression, loadDocument, parseChain, type ChainGraph } from '../../src/index.js';

// Long runs (100k random strings) only under STEPFORGE_LONG; the default run stays fast.
const LONG = process.env.STEPFORGE_LONG !== undefined && process.env.STEPFORGE_LONG !== '';
const RUNS = LONG ? 100_000 : 3_000;
const SMALL_RUNS = LONG ? 20_000 : 1_000;
/** Per-test timeout: the long runs take minutes on a loaded machine. */
const TIMEOUT = LONG ? 900_000 : 60_000;

/** A chain expression as a token list, so tests can put whitespace between tokens. */
type Tokens = string[];

const handle = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f_1', 'g-2');
const tool = fc.constantFrom('x', 'y', 'web-search');

const expression: fc.Arbitrary<Tokens> = fc.letrec<{ expr: Tokens; leaf: Tokens }>((tie) => ({
  leaf: fc.tuple(handle, fc.array(tool, { maxLength: 2 })).map(([h, ts]) => [h, ...ts.flatMap((t) => ['@', t])]),
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    fc
      .tuple(fc.constantFrom('>', '&', '|'), fc.array(tie('expr'), { minLength: 2, maxLength: 4 }), fc.boolean())
      .map(([op, items, bracket]) => {
        const body = items.flatMap((t, i) => (i === 0 ? ['[', ...t, ']'] : [op, '[', ...t, ']']));
        return bracket ? ['[', ...body, ']'] : body;
      }),
  ),
})).expr;

const whitespace = fc.array(fc.constantFrom(' ', '\t', '\n', '\r\n', '  '), { maxLength: 3 }).map((w) => w.join(''));

function graphOf(text: string): ChainGraph {
  const parsed = parseChain(text);
  if (!parsed.ok) throw new Error(`generator produced an invalid expression: ${text}: ${parsed.error.message}`);
  return buildChainGraph(parsed.ast);
}

/** Edges as `parent>child` handle pairs, so graphs with different node numbering compare as sets. */
function edgeSet(g: ChainGraph): string[] {
  return g.edges.map(([p, c]) => `${g.nodes[p]!.handle}>${g.nodes[c]!.handle}`).sort();
}

const NAMED = new Set(['parse', 'unknown_handle', 'cycle', 'agentic_non_model', 'tier_limit', 'invalid_task', 'invalid_document']);

describe('Function: loadChainExpression (properties)', () => {
  it(
    'does not change the graph when whitespace is inserted between tokens',
    () => {
      fc.assert(
        fc.property(expression, fc.array(whitespace, { minLength: 64, maxLength: 64 }), (tokens, spaces) => {
          const compact = tokens.join('');
          const spaced = tokens.map((t, i) => spaces[i % spaces.length] + t).join('') + spaces[0];
          const a = loadChainExpression(compact);
          const b = loadChainExpression(spaced);
          expect(b.graph).toEqual(a.graph);
          expect(b.errors.map((e) => [e.code, e.message])).toEqual(a.errors.map((e) => [e.code, e.message]));
        }),
        { numRuns: SMALL_RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'treats & and | as commutative, as sets of edges',
    () => {
      fc.assert(
        fc.property(expression, expression, fc.constantFrom('&', '|'), (a, b, op) => {
          const left = `[${a.join(' ')}] ${op} [${b.join(' ')}]`;
          const right = `[${b.join(' ')}] ${op} [${a.join(' ')}]`;
          const gl = graphOf(left);
          const gr = graphOf(right);
          expect(edgeSet(gr)).toEqual(edgeSet(gl));
          expect(gr.nodes.map((n) => n.handle).sort()).toEqual(gl.nodes.map((n) => n.handle).sort());
        }),
        { numRuns: SMALL_RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'gives & and | the same graph',
    () => {
      fc.assert(
        fc.property(expression, (tokens) => {
          const amp = tokens.map((t) => (t === '|' ? '&' : t)).join(' ');
          const pipe = tokens.map((t) => (t === '&' ? '|' : t)).join(' ');
          expect(graphOf(pipe)).toEqual(graphOf(amp));
        }),
        { numRuns: SMALL_RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'only ever produces named, located errors for random strings',
    () => {
      const chainish = fc.string({ unit: fc.constantFrom(...'ab_x-1 @[]>&|\n\t%"\'#:{},é'.split(''), '😀'), maxLength: 40 });
      fc.assert(
        fc.property(fc.oneof(chainish, fc.string({ unit: 'binary', maxLength: 30 })), (text) => {
          const r = loadChainExpression(text);
          expect(r.errors.length > 0 || r.graph !== undefined).toBe(true);
          for (const e of r.errors) {
            expect(NAMED.has(e.code)).toBe(true);
            expect(e.location!.line).toBeGreaterThanOrEqual(1);
            expect(e.location!.column).toBeGreaterThanOrEqual(1);
            expect(e.toString()).toContain(`error[${e.code}]`);
          }
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'only ever produces named errors for random expressions inside a document',
    () => {
      const chainish = fc.string({ unit: fc.constantFrom(...'ab_x @[]>&|\n%"\\'.split('')), maxLength: 30 });
      fc.assert(
        fc.property(chainish, fc.constantFrom('json', 'single', 'block'), (expr, style) => {
          const scalar =
            style === 'json'
              ? JSON.stringify(expr)
              : style === 'single'
                ? `'${expr.replace(/'/g, "''").replace(/\n/g, '\n\n')}'`
                : `|-\n  ${expr.replace(/\n/g, '\n  ')}`;
          const doc = `chain: ${scalar}\ntasks:\n  a: {kind: model, prompt: p}\n  b: {kind: tool, tool: t}\n`;
          const r = loadChainDocument(doc);
          for (const e of r.errors) {
            expect(NAMED.has(e.code)).toBe(true);
            expect(e.location!.line).toBeGreaterThanOrEqual(1);
          }
          // In a JSON-quoted scalar, a parse error's caret sits on the very character the expression has there.
          const parsed = parseChain(expr);
          if (style === 'json' && !parsed.ok && parsed.error.offset < expr.length) {
            const ch = expr[parsed.error.offset]!;
            const first = r.errors.find((e) => e.code === 'parse')!;
            const line = doc.split('\n')[first.location!.line - 1]!;
            const expected = ch === '"' || ch === '\\' || ch === '\n' ? '\\' : ch;
            expect(line[first.location!.column - 1]).toBe(expected);
          }
        }),
        { numRuns: SMALL_RUNS },
      );
    },
    TIMEOUT,
  );

  it(
    'never throws on random documents',
    () => {
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom(...'chain: steps tasks\n -[]{}"\'a>b@x&|#'.split('')), maxLength: 60 }), (text) => {
          const r = loadDocument(text);
          for (const e of r.errors) expect(typeof e.code).toBe('string');
        }),
        { numRuns: SMALL_RUNS },
      );
    },
    TIMEOUT,
  );
});
