import { describe, expect, it } from 'vitest';
import { parseTemplate, parseTemplateByTokens } from '../../src/expr/parseTemplate.js';
import { isStepforgeError } from '@stepforge/contract';
import { rng, template } from './exprCorpus.js';

/** What parseTemplate gives, or the code, message and details of what it throws. */
function outcome(parse: (text: string) => unknown, text: string): unknown {
  try {
    return parse(text);
  } catch (e) {
    if (!isStepforgeError(e)) throw e;
    return { code: e.code, message: e.message, details: e.details };
  }
}

describe('Function: parseTemplate (dotted paths read straight off the text)', () => {
  it('builds the nodes the lexer and parser build, for paths and for everything near them', () => {
    const texts = [
      '${ steps.plan.output }',
      '${steps.plan.output}',
      '${ steps.plan.output.items.first }',
      '${ steps.plan-b_2.output } and ${ input.topic }',
      '${\tinput.a.b\n}',
      '${ topic }',
      'say ${topic}!',
      '${ input }',
      '${ steps }',
      '${ steps.plan }',
      '${ steps.plan.result }',
      '${ steps.plan.output.0 }',
      '${ steps.plan.output[0] }',
      '${ steps . plan.output }',
      '${ input. }',
      '${ input.a | default "x" }',
      '${ input.a == 1 }',
      '${ true }',
      '${ false.x }',
      '${ null }',
      '${ nullish }',
      '${ }',
      '${ input.a',
      '${ 1 }',
      '${ input.é }',
      '$${ input.a } ${ input.b }',
      '${ input.a }}',
    ];
    for (const text of texts) expect(outcome(parseTemplate, text), text).toEqual(outcome(parseTemplateByTokens, text));
  });

  it('agrees with the lexer and parser on generated templates', () => {
    const r = rng(29);
    for (let i = 0; i < 2000; i++) {
      const text = template(r);
      expect(outcome(parseTemplate, text), text).toEqual(outcome(parseTemplateByTokens, text));
    }
  });

  it('keeps the nodes in the parser key order', () => {
    const part = parseTemplate('${ steps.plan.output.items }').parts[0]!;
    expect(Object.keys(part)).toEqual(['kind', 'expr', 'offset', 'end']);
    expect(part).toEqual({
      kind: 'expr',
      expr: { kind: 'path', root: { kind: 'step', step: 'plan' }, segments: ['items'], implicitInput: false, offset: 3, length: 23 },
      offset: 0,
      end: 28,
    });
    expect(Object.keys((part as { expr: object }).expr)).toEqual(
      Object.keys((parseTemplateByTokens('${ steps.plan.output.items }').parts[0] as { expr: object }).expr),
    );
  });
});
