// The dynalite expression parse cache answers exactly as dynalite's own parsers do: same trees
// (with this request's value objects), same "unused" bookkeeping, same errors, and no caching
// where values decide the outcome.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

interface Parser {
  parse(str: string, options: { context: Context }): unknown;
  SyntaxError: unknown;
}
interface Context {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, Record<string, unknown>>;
  unusedAttrNames: Record<string, true>;
  unusedAttrVals: Record<string, true>;
  isReserved?: (name: string) => boolean;
  compare?: unknown;
  isKeyCondition?: boolean;
}
interface Memo extends Parser {
  readonly stats: { hits: number; misses: number; uncacheable: number };
  readonly size: number;
}

const { memoizeExpressionParser, installExpressionCache } = require('../src/dynaliteExpressionCache.cjs') as {
  memoizeExpressionParser(parser: Parser, options?: { maxEntries?: number }): Memo;
  installExpressionCache(dynaliteEntry: string): string[];
};
// The modules dynalite loads, before any cache is installed on them in this process.
const dynaliteEntry = require.resolve('dynalite');
const fromDynalite = createRequire(dynaliteEntry);
const rawParsers = Object.fromEntries(
  ['conditionParser', 'updateParser', 'projectionParser'].map((n) => {
    const m = fromDynalite(`./db/${n}`) as Parser;
    return [n, { parse: m.parse, SyntaxError: m.SyntaxError } satisfies Parser];
  }),
) as Record<'conditionParser' | 'updateParser' | 'projectionParser', Parser>;
const db = fromDynalite('./db') as { compare: unknown };
const validations = fromDynalite('./validations') as { validateExpressions(data: Record<string, unknown>): string | undefined };

/** A context as dynalite's validateExpressions builds it. */
function contextOf(names: Record<string, string> | undefined, vals: Record<string, Record<string, unknown>> | undefined): Context {
  const reserved = new Set(['STATUS', 'KEY', 'TYPE', 'OUTPUT', 'USAGE', 'ERROR', 'NAME', 'DATA', 'TTL']);
  return {
    ...(names ? { attrNames: names } : {}),
    ...(vals ? { attrVals: vals } : {}),
    unusedAttrNames: Object.fromEntries(Object.keys(names ?? {}).map((k) => [k, true as const])),
    unusedAttrVals: Object.fromEntries(Object.keys(vals ?? {}).map((k) => [k, true as const])),
    isReserved: (n) => reserved.has(n.toUpperCase()),
    compare: db.compare,
  };
}

/** What a parse answers: its result (or thrown error) and the unused sets it leaves. */
function outcome(
  parser: Parser,
  str: string,
  ctx: Context,
): { result?: unknown; error?: string; unusedNames: string[]; unusedVals: string[] } {
  let result: unknown;
  let error: string | undefined;
  try {
    result = parser.parse(str, { context: ctx });
  } catch (e) {
    error = `${(e as Error).name}: ${(e as Error).message}`;
  }
  return {
    ...(error === undefined ? { result } : { error }),
    unusedNames: Object.keys(ctx.unusedAttrNames).sort(),
    unusedVals: Object.keys(ctx.unusedAttrVals).sort(),
  };
}

const CLAIM_NAMES = { '#key': 'key', '#status': 'status', '#type': 'type' };
const claimVals = (n: number) => ({
  ':idem': { M: { key: { S: `run${n}:s1:abc` }, status: { S: 'INPROGRESS' }, leaseId: { S: `lease-${n}` } } },
  ':running': { S: 'RUNNING' },
  ':now': { S: `2026-01-0${n}T00:00:00.000Z` },
  ':run': { S: `run${n}` },
  ':step': { S: 's1' },
  ':type': { S: 'step' },
  ':one': { N: '1' },
  ':key': { S: `run${n}:s1:abc` },
  ':nowS': { N: String(1000 + n) },
  ':nowMs': { N: String(1_000_000 + n) },
  ':inprogress': { S: 'INPROGRESS' },
});

/** Expressions as the runtime writes them, plus others that exercise every parser feature it may meet. */
const CASES: readonly {
  parser: keyof typeof rawParsers;
  str: string;
  names?: Record<string, string>;
  vals?: (n: number) => Record<string, Record<string, unknown>>;
}[] = [
  { parser: 'conditionParser', str: 'attribute_not_exists(pk)' },
  {
    parser: 'conditionParser',
    str: 'attribute_not_exists(idem) OR idem.#key = :key AND idem.expiresAt < :nowS OR idem.#key = :key AND idem.#status = :inprogress AND idem.leaseExpiresAt < :nowMs AND attribute_not_exists(idem.dispatchedAt)',
    names: { '#key': 'key', '#status': 'status' },
    vals: (n) => {
      const { ':key': key, ':nowS': nowS, ':nowMs': nowMs, ':inprogress': ip } = claimVals(n);
      return { ':key': key, ':nowS': nowS, ':nowMs': nowMs, ':inprogress': ip };
    },
  },
  {
    parser: 'updateParser',
    str: 'SET idem = :idem, #status = :running, startedAt = if_not_exists(startedAt, :now), runId = :run, stepId = :step, #type = :type ADD attempts :one',
    names: { '#status': 'status', '#type': 'type' },
    vals: (n) => {
      const { ':idem': idem, ':running': r, ':now': now, ':run': run, ':step': step, ':type': type, ':one': one } = claimVals(n);
      return { ':idem': idem, ':running': r, ':now': now, ':run': run, ':step': step, ':type': type, ':one': one };
    },
  },
  {
    parser: 'conditionParser',
    str: 'idem.#key = :key AND idem.leaseId = :lease',
    names: { '#key': 'key' },
    vals: (n) => ({ ':key': { S: `k${n}` }, ':lease': { S: `l${n}` } }),
  },
  {
    parser: 'updateParser',
    str: 'SET idem.#status = :c, idem.#output = :o, #status = :s, #output = :so, list = list_append(list, :l), n = n + :one REMOVE gone, other[2] DELETE tags :t',
    names: { '#status': 'status', '#output': 'output' },
    vals: (n) => ({
      ':c': { S: 'COMPLETED' },
      ':o': { M: { text: { S: `out ${n}` } } },
      ':s': { S: 'SUCCEEDED' },
      ':so': { S: `out ${n}` },
      ':l': { L: [{ N: String(n) }] },
      ':one': { N: '1' },
      ':t': { SS: [`t${n}`] },
    }),
  },
  { parser: 'conditionParser', str: 'pk = :pk AND begins_with(sk, :p)', vals: (n) => ({ ':pk': { S: `RUN#${n}` }, ':p': { S: 'STEP#' } }) },
  {
    parser: 'conditionParser',
    str: 'NOT (a.b[1] IN (:x, :y)) AND size(c) > :n OR contains(d, :x) AND e <> :y',
    vals: (n) => ({ ':x': { S: `x${n}` }, ':y': { S: 'y' }, ':n': { N: String(n) } }),
  },
  { parser: 'projectionParser', str: 'pk, #s, a.b[2].c', names: { '#s': 'status' } },
  // Errors: a syntax error, an undefined value, a reserved word, a wrong operand type, redundant parentheses.
  { parser: 'conditionParser', str: 'a = = :x', vals: () => ({ ':x': { S: 'x' } }) },
  { parser: 'conditionParser', str: 'a = :missing', vals: () => ({ ':x': { S: 'x' } }) },
  { parser: 'conditionParser', str: 'status = :x', vals: () => ({ ':x': { S: 'x' } }) },
  { parser: 'conditionParser', str: 'begins_with(a, :x)', vals: (n) => ({ ':x': n % 2 === 0 ? { S: 'x' } : { N: '1' } }) },
  { parser: 'conditionParser', str: '((a = :x))', vals: () => ({ ':x': { S: 'x' } }) },
  { parser: 'updateParser', str: 'SET a = a + :x', vals: (n) => ({ ':x': n % 2 === 0 ? { N: '1' } : { S: 'one' } }) },
  // Values decide these outcomes: never cached.
  { parser: 'conditionParser', str: 'a BETWEEN :lo AND :hi', vals: (n) => ({ ':lo': { N: String(n) }, ':hi': { N: String(3 - n) } }) },
  { parser: 'conditionParser', str: 'attribute_type(a, :t)', vals: (n) => ({ ':t': { S: n % 2 === 0 ? 'S' : 'XX' } }) },
];

describe('Function: memoizeExpressionParser', () => {
  it('answers every case as dynalite does, on misses and on hits', () => {
    const memos = Object.fromEntries(Object.entries(rawParsers).map(([k, p]) => [k, memoizeExpressionParser(p)])) as Record<
      keyof typeof rawParsers,
      Memo
    >;
    for (let n = 0; n < 4; n++) {
      for (const c of CASES) {
        const vals = c.vals?.(n);
        const expected = outcome(rawParsers[c.parser], c.str, contextOf(c.names, vals));
        const got = outcome(memos[c.parser], c.str, contextOf(c.names, vals));
        expect(got, `${c.str} (request ${n})`).toEqual(expected);
      }
    }
    expect(memos.conditionParser.stats.hits).toBeGreaterThan(0);
    expect(memos.updateParser.stats.hits).toBeGreaterThan(0);
    expect(memos.projectionParser.stats.hits).toBe(3);
  });

  it("puts this request's value objects in the tree, not a cached request's", () => {
    const memo = memoizeExpressionParser(rawParsers.conditionParser);
    const str = 'idem.#key = :key AND idem.leaseId = :lease';
    memo.parse(str, { context: contextOf({ '#key': 'key' }, { ':key': { S: 'first' }, ':lease': { S: 'l1' } }) });
    const second = { ':key': { S: 'second' }, ':lease': { S: 'l2' } };
    const tree = memo.parse(str, { context: contextOf({ '#key': 'key' }, second) }) as { expression: { args: { args: unknown[] }[] } };
    expect(memo.stats.hits).toBe(1);
    expect(tree.expression.args[0]!.args[1]).toBe(second[':key']);
    expect(tree.expression.args[1]!.args[1]).toBe(second[':lease']);
  });

  it('hands out a fresh tree on every hit, so a caller that changes one changes no other', () => {
    const memo = memoizeExpressionParser(rawParsers.updateParser);
    const str = 'SET a = :a, b = :b';
    const vals = () => ({ ':a': { S: 'a' }, ':b': { S: 'b' } });
    const one = memo.parse(str, { context: contextOf(undefined, vals()) }) as { sections: unknown[] };
    one.sections.length = 0;
    const two = memo.parse(str, { context: contextOf(undefined, vals()) });
    expect(two).toEqual(rawParsers.updateParser.parse(str, { context: contextOf(undefined, vals()) }));
  });

  it('keeps sub-trees shared where the parser shares them', () => {
    const memo = memoizeExpressionParser(rawParsers.updateParser);
    const str = 'SET a.b = :v';
    memo.parse(str, { context: contextOf(undefined, { ':v': { S: '1' } }) });
    const tree = memo.parse(str, { context: contextOf(undefined, { ':v': { S: '2' } }) }) as {
      sections: { path: unknown }[];
      paths: unknown[];
    };
    const raw = rawParsers.updateParser.parse(str, { context: contextOf(undefined, { ':v': { S: '2' } }) }) as {
      sections: { path: unknown }[];
      paths: unknown[];
    };
    expect(raw.paths[0] === raw.sections[0]!.path).toBe(tree.paths[0] === tree.sections[0]!.path);
  });

  it("removes the names and values an expression uses from the request's unused sets, whatever an earlier expression removed", () => {
    const memo = memoizeExpressionParser(rawParsers.conditionParser);
    const names = { '#a': 'a', '#b': 'b' };
    const vals = { ':x': { S: 'x' }, ':y': { S: 'y' } };
    // First seen in a request whose update expression already used #a and :x.
    const first = contextOf(names, vals);
    delete first.unusedAttrNames['#a'];
    delete first.unusedAttrVals[':x'];
    memo.parse('#a = :x AND #b = :y', { context: first });
    expect(first.unusedAttrNames).toEqual({});
    expect(first.unusedAttrVals).toEqual({});
    // A hit in a request where nothing else used them must still remove all four.
    const second = contextOf(names, vals);
    memo.parse('#a = :x AND #b = :y', { context: second });
    expect(memo.stats.hits).toBe(1);
    expect(second.unusedAttrNames).toEqual({});
    expect(second.unusedAttrVals).toEqual({});
  });

  it('removes only what the expression itself uses, so a name nothing uses is still reported', () => {
    const memo = memoizeExpressionParser(rawParsers.conditionParser);
    const names = { '#a': 'a', '#c': 'c' };
    // First seen where another expression of the request used #c.
    const first = contextOf(names, undefined);
    delete first.unusedAttrNames['#c'];
    memo.parse('#a = b', { context: first });
    // On a hit where nothing uses #c, it stays unused (dynalite then refuses the request).
    const second = contextOf(names, undefined);
    memo.parse('#a = b', { context: second });
    expect(memo.stats.hits).toBe(1);
    expect(second.unusedAttrNames).toEqual({ '#c': true });
  });

  it('keys on the name bindings and the value types, and never caches BETWEEN or attribute_type', () => {
    const memo = memoizeExpressionParser(rawParsers.conditionParser);
    memo.parse('#n = :v', { context: contextOf({ '#n': 'a' }, { ':v': { S: 'x' } }) });
    const renamed = memo.parse('#n = :v', { context: contextOf({ '#n': 'b' }, { ':v': { S: 'x' } }) }) as {
      expression: { args: unknown[] };
    };
    expect(renamed.expression.args[0]).toEqual(['b']);
    memo.parse('#n = :v', { context: contextOf({ '#n': 'a' }, { ':v': { N: '1' } }) });
    expect(memo.stats).toMatchObject({ hits: 0, misses: 3 });
    // Names may hold any character: no binding can pass for another.
    const odd = memo.parse('#n = :v', { context: contextOf({ '#n': 'a=b,#m=c' }, { ':v': { S: 'x' } }) }) as {
      expression: { args: unknown[] };
    };
    expect(odd.expression.args[0]).toEqual(['a=b,#m=c']);
    expect(memo.stats.misses).toBe(4);
    memo.parse('a BETWEEN :lo AND :hi', { context: contextOf(undefined, { ':lo': { N: '1' }, ':hi': { N: '2' } }) });
    memo.parse('attribute_type(a, :t)', { context: contextOf(undefined, { ':t': { S: 'S' } }) });
    expect(memo.stats.uncacheable).toBe(2);
  });

  it('caches no failed parse, and stays within its size', () => {
    const memo = memoizeExpressionParser(rawParsers.conditionParser, { maxEntries: 3 });
    for (let i = 0; i < 2; i++) expect(() => memo.parse('a = = b', { context: contextOf(undefined, undefined) })).toThrow(/Expected/);
    expect(memo.parse('status = a', { context: contextOf(undefined, undefined) })).toMatch(
      /^Attribute name is a reserved keyword; reserved keyword: status$/,
    );
    expect(memo.size).toBe(0);
    for (let i = 0; i < 10; i++) memo.parse(`a${i} = b`, { context: contextOf(undefined, undefined) });
    expect(memo.size).toBe(3);
  });
});

describe('Function: installExpressionCache', () => {
  it("replaces dynalite's parsers once, and dynalite's validation then gives the same answers", () => {
    const request = (n: number) => ({
      UpdateExpression: CASES[2]!.str,
      ConditionExpression: CASES[1]!.str,
      ExpressionAttributeNames: CLAIM_NAMES,
      ExpressionAttributeValues: claimVals(n),
    });
    const before = [0, 1].map((n) => {
      const d = request(n);
      return { msg: validations.validateExpressions(d), d };
    });
    const unused = { ...request(0), ExpressionAttributeValues: { ...claimVals(0), ':spare': { S: 'x' } } };
    const unusedBefore = validations.validateExpressions(unused);
    expect(installExpressionCache(dynaliteEntry)).toEqual(['conditionParser', 'updateParser', 'projectionParser']);
    expect(installExpressionCache(dynaliteEntry)).toEqual([]);
    const after = [0, 1].map((n) => {
      const d = request(n);
      return { msg: validations.validateExpressions(d), d };
    });
    expect(after).toEqual(before);
    const unusedAfter = { ...request(1), ExpressionAttributeValues: { ...claimVals(1), ':spare': { S: 'x' } } };
    expect(validations.validateExpressions(unusedAfter)).toBe(unusedBefore);
    expect(unusedBefore).toMatch(/unused in expressions: keys: \{:spare\}/);
    expect((fromDynalite('./db/updateParser') as { parse: { stats: { hits: number } } }).parse.stats.hits).toBeGreaterThan(0);
  });
});
