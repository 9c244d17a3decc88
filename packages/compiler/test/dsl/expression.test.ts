import { describe, expect, it } from 'vitest';
import {
  evaluateCondition,
  evaluateTemplate,
  expressionToJsonata,
  isStepforgeError,
  jsonataHelpersUsed,
  parseExpression,
  parseTemplate,
  templateStepReferences,
  templateToJsonata,
  withJsonataHelpers,
  type StepforgeError,
} from '@stepforge/compiler';

const ctx = {
  input: {
    topic: 'tides',
    n: 3,
    zero: 0,
    empty: '',
    nothing: null,
    list: [10, [20, 30], { k: 'v' }],
    obj: { a: { b: 'deep' } },
    emptyList: [],
    emptyObj: {},
    ratio: 0.1 + 0.2,
    flag: false,
  },
  steps: {
    plan: { output: '{"sources":[{"url":"u1"},{"url":"u2"}],"count":2}' },
    text: { output: 'plain words' },
    arr: { output: '[1, {"x": true}]' },
    bad: { output: '{not json}' },
  },
};

const ev = (s: string): unknown => evaluateTemplate(parseTemplate(s), ctx);

function syntaxError(f: () => unknown): StepforgeError {
  try {
    f();
  } catch (e) {
    if (isStepforgeError(e)) return e;
    throw e;
  }
  throw new Error('expected an expression error');
}

describe('Function: parseTemplate', () => {
  it('splits text and expressions and marks whole-string templates', () => {
    const t = parseTemplate('Hi ${ input.topic }!');
    expect(t.whole).toBe(false);
    expect(t.parts.map((p) => p.kind)).toEqual(['text', 'expr', 'text']);
    expect(parseTemplate('${ topic }').whole).toBe(true);
    expect(parseTemplate(' ${ topic }').whole).toBe(false);
  });

  it('treats $${ as a literal ${', () => {
    expect(ev('cost: $${ not an expression }')).toBe('cost: ${ not an expression }');
  });

  it('finds the closing brace past strings and {} literals', () => {
    expect(ev('${ input.missing | default "}" }')).toBe('}');
    expect(ev('${ input.missing | default {} }')).toEqual({});
  });

  it('reports syntax errors with the offset of the offending token', () => {
    const cases: [string, string, number][] = [
      ['${ a && }', 'unexpected end of expression', 8],
      ['x ${ a = 1 }', "unexpected '=' (did you mean '=='?)", 7],
      ['${ a | defualt 1 }', "expected 'default' after '|'", 7],
      ['${ a == b == c }', 'comparisons cannot be chained', 10],
      ['${ "open }', 'unterminated string literal', 3],
      ['${ a.b', "unterminated '${'", 0],
      ['${ }', 'empty expression', 0],
      ['${ steps.plan.result }', 'steps.plan.output', 3],
      ['${ a[-1] }', 'non-negative integer', 5],
      ['${ [1] }', 'only the empty array', 4],
      ['${ a # }', "unexpected character '#'", 5],
      ['${ a ! 2 }', "unexpected '!' (did you mean '!='?)", 5],
      ['${ !steps.check.output }', "unexpected '!': there is no negation; compare instead, e.g. ${ steps.check.output == false }", 3],
      ['${ ! (a) }', 'there is no negation', 3],
    ];
    for (const [text, message, offset] of cases) {
      const e = syntaxError(() => parseTemplate(text));
      expect(e.code).toBe('expression');
      expect(e.message).toContain(message);
      expect(e.details?.offset).toBe(offset);
    }
  });

  it('parses bare expressions with parseExpression', () => {
    expect(parseExpression('input.a >= 2').kind).toBe('compare');
    expect(syntaxError(() => parseExpression('a }')).message).toContain("unexpected '}'");
  });
});

describe('Function: evaluateTemplate', () => {
  it('keeps the type of a whole-string expression and interpolates embedded ones', () => {
    expect(ev('${ input.n }')).toBe(3);
    expect(ev('${ input.list }')).toEqual(ctx.input.list);
    expect(ev('n=${ input.n }, list=${ input.list }, none=[${ input.nothing }], miss=[${ input.missing }]')).toBe(
      'n=3, list=[10,[20,30],{"k":"v"}], none=[], miss=[]',
    );
    expect(ev('${ input.missing }')).toBeNull();
  });

  it('writes numbers like JSONata (15 significant digits)', () => {
    expect(ev('r=${ input.ratio }')).toBe('r=0.3');
  });

  it('reads bare paths from input, and indices with dots or brackets', () => {
    expect(ev('${ topic }')).toBe('tides');
    expect(ev('${ list.1.0 }')).toBe(20);
    expect(ev('${ input.list[1][1] }')).toBe(30);
    expect(ev('${ input.list[2]["k"] }')).toBe('v');
    expect(ev('${ obj.a.b }')).toBe('deep');
    expect(ev('${ input.list.9 }')).toBeNull();
    expect(ev('${ input.obj.0 }')).toBeNull();
  });

  it('traverses step outputs that are JSON strings', () => {
    expect(ev('${ steps.plan.output.sources[1].url }')).toBe('u2');
    expect(ev('${ steps.arr.output.1.x }')).toBe(true);
    expect(ev('${ steps.plan.output }')).toBe(ctx.steps.plan.output);
    expect(ev('${ steps.text.output.x | default "none" }')).toBe('none');
    expect(ev('${ steps.unknown.output }')).toBeNull();
  });

  it('fails with expression_eval when traversing a JSON-shaped string that does not parse', () => {
    const e = syntaxError(() => ev('${ steps.bad.output.x }'));
    expect(e.code).toBe('expression_eval');
    expect(e.message).toContain('not valid JSON');
  });

  it('applies | default to missing and null only', () => {
    expect(ev('${ input.missing | default 5 }')).toBe(5);
    expect(ev('${ input.nothing | default "d" }')).toBe('d');
    expect(ev('${ input.zero | default 5 }')).toBe(0);
    expect(ev('${ input.empty | default "d" }')).toBe('');
    expect(ev('${ input.missing | default null | default [] }')).toEqual([]);
  });

  it('uses || as a coalesce: the left side wins when it resolves and is truthy', () => {
    expect(ev('${ input.missing || input.topic }')).toBe('tides');
    expect(ev('${ input.topic || "x" }')).toBe('tides');
    expect(ev('${ input.zero || input.empty || "last" }')).toBe('last');
    expect(ev('${ input.emptyList || input.emptyObj || 7 }')).toBe(7);
  });

  it('makes && a boolean', () => {
    expect(ev('${ input.topic && input.n }')).toBe(true);
    expect(ev('${ input.topic && input.zero }')).toBe(false);
  });

  it('compares with == != < > <= >=', () => {
    expect(ev('${ input.n == 3 }')).toBe(true);
    expect(ev('${ input.n != 3 }')).toBe(false);
    expect(ev('${ input.n >= input.n }')).toBe(true);
    expect(ev('${ input.topic < "z" }')).toBe(true);
    expect(ev('${ input.n < "z" }')).toBe(false);
    expect(ev('${ input.missing == null }')).toBe(true);
    expect(ev('${ input.emptyObj == {} }')).toBe(true);
    expect(ev('${ input.list == input.list }')).toBe(true);
    expect(ev('${ input.n == "3" }')).toBe(false);
  });

  it('treats empty string, false, 0, null, missing, [] and {} as false in conditions', () => {
    const cond = (s: string) => evaluateCondition(parseTemplate(s), ctx);
    for (const f of ['empty', 'flag', 'zero', 'nothing', 'missing', 'emptyList', 'emptyObj']) expect(cond(`\${ input.${f} }`)).toBe(false);
    for (const t of ['topic', 'n', 'list', 'obj']) expect(cond(`\${ input.${t} }`)).toBe(true);
  });
});

describe('Function: templateToJsonata', () => {
  it('uses resolveRoot for input and step roots', () => {
    const j = templateToJsonata(parseTemplate('${ steps.plan.output.count }'), {
      resolveRoot: (r) => (r.kind === 'input' ? '$states.input' : `$${r.step}_output`),
      helpers: 'none',
    });
    expect(j).toBe('( $sfV0 := $sfStep($plan_output, "count"); $exists($sfV0) ? $sfV0 : null )');
  });

  it('binds only the helpers an expression uses, dependencies first', () => {
    expect(jsonataHelpersUsed('$sfEq($a, $b)')).toEqual(['$sfQuote', '$sfCanon', '$sfEq']);
    expect(withJsonataHelpers('"plain"')).toBe('"plain"');
    const j = templateToJsonata(parseTemplate('${ a == 1 }'), { wrap: true });
    expect(j.startsWith('{% ( $sfJson := function')).toBe(true);
    expect(j.indexOf('$sfQuote := ')).toBeLessThan(j.indexOf('$sfCanon := '));
    expect(j).not.toContain('$sfTruthy := ');
    expect(j.endsWith(' %}')).toBe(true);
  });

  it('gives a boolean for conditions and a string for embedded templates', () => {
    expect(templateToJsonata(parseTemplate('${ a }'), { mode: 'condition', helpers: 'none' })).toMatch(/^\$sfTruthy\(/);
    expect(templateToJsonata(parseTemplate('x ${ a }'), { helpers: 'none' })).toBe('"x " & $sfStr($sfStep($states.input, "a"))');
    expect(expressionToJsonata(parseExpression('-1'), { helpers: 'none' })).toBe('(-1)');
  });
});

describe('Function: templateStepReferences', () => {
  it('lists the steps a template reads, once each', () => {
    expect(templateStepReferences(parseTemplate('${ steps.a.output } ${ steps.b.output.x || steps.a.output }'))).toEqual(['a', 'b']);
  });
});
