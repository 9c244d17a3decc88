// Anchors, aliases and tags in every YAML front-end: each problem is a named error at its place, never
// a crash of the yaml package surfacing as an internal error.
import { describe, expect, it } from 'vitest';
import {
  compileDocument,
  isStepforgeError,
  loadChainDocument,
  loadDocument,
  loadDslDocument,
  type StepforgeError,
} from '@stepforge/compiler';

const CHAIN_TASK = '{ kind: model, prompt: hi }';
const DSL_HEAD = 'document: { dsl: "1.0", name: x }\nagents: { a: {} }\n';

/** Each front-end entry point, with the error code it names YAML problems with. */
const FRONT_ENDS = {
  chain: { load: (t: string) => loadChainDocument(t, { file: 'f.chain.yaml' }), code: 'invalid_document' },
  dsl: { load: (t: string) => loadDslDocument(t, { file: 'f.yaml' }), code: 'yaml' },
} as const;

/** [case, front-end, text, line, column, message] */
const CASES: readonly (readonly [string, keyof typeof FRONT_ENDS, string, number, number, RegExp])[] = [
  [
    'the chain is an alias without its anchor',
    'chain',
    'chain: *a\ntasks: {}\n',
    1,
    8,
    /^alias '\*a' has no anchor: no value before it is marked '&a'; mark the value to repeat with &a earlier/,
  ],
  ['a task is an alias without its anchor', 'chain', `chain: "a@x"\ntasks:\n  a: *t\n`, 3, 6, /^alias '\*t' has no anchor/],
  [
    'an alias comes before its anchor',
    'chain',
    `chain: "a@x"\ntasks:\n  a: *t\nlater: &t ${CHAIN_TASK}\n`,
    3,
    6,
    /^alias '\*t' has no anchor/,
  ],
  [
    'a task aliases the mapping it is in',
    'chain',
    'chain: "a@x"\ntasks: &t\n  a: *t\n',
    3,
    6,
    /^alias '\*t' is inside the value its anchor '&t' marks, so that value would contain itself/,
  ],
  [
    'a prompt has a local tag',
    'chain',
    'chain: "a@x"\ntasks:\n  a: { kind: model, prompt: !secret hi }\n',
    3,
    29,
    /^YAML tag '!secret' is not supported: a workflow document holds plain data .*; remove the tag$/,
  ],
  [
    'a prompt is !!binary',
    'chain',
    'chain: "a@x"\ntasks:\n  a: { kind: model, prompt: !!binary aGk= }\n',
    3,
    29,
    /^YAML tag '!!binary' is not supported/,
  ],
  [
    'the chain does not fit !!int',
    'chain',
    `chain: !!int "a@x"\ntasks:\n  a: ${CHAIN_TASK}\n`,
    1,
    8,
    /^the value does not fit its YAML tag '!!int'; remove the tag, or write a value of that type$/,
  ],
  [
    'aliases expand a billion-fold',
    'chain',
    `a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nchain: "a@x"\ntasks:\n  a: ${CHAIN_TASK}\n`,
    2,
    8,
    /^the aliases in this document expand to too many values/,
  ],
  ['the steps are an alias without its anchor', 'dsl', `${DSL_HEAD}steps: *s\n`, 3, 8, /^alias '\*s' has no anchor/],
  [
    'a template is an alias without its anchor',
    'dsl',
    `${DSL_HEAD}steps:\n  a: { call: agent, agent: a, input_template: *p }\n`,
    4,
    47,
    /^alias '\*p' has no anchor/,
  ],
  [
    'a step aliases the list it is in',
    'dsl',
    `${DSL_HEAD}steps: &s\n  a: *s\n`,
    4,
    6,
    /^alias '\*s' is inside the value its anchor '&s' marks/,
  ],
  [
    'an agent reference has a local tag',
    'dsl',
    `${DSL_HEAD}steps:\n  a: { call: agent, agent: !weird a, input_template: x }\n`,
    4,
    28,
    /^YAML tag '!weird' is not supported/,
  ],
  [
    'a template is a !!timestamp',
    'dsl',
    `${DSL_HEAD}steps:\n  a: { call: agent, agent: a, input_template: !!timestamp 2001-12-14 }\n`,
    4,
    47,
    /^YAML tag '!!timestamp' is not supported/,
  ],
  [
    'a template is a !!set',
    'dsl',
    `${DSL_HEAD}steps:\n  a: { call: agent, agent: a, input_template: !!set { a, b } }\n`,
    4,
    47,
    /^YAML tag '!!set' is not supported/,
  ],
  [
    'an agent reference does not fit !!float',
    'dsl',
    `${DSL_HEAD}steps:\n  a: { call: agent, agent: !!float a, input_template: x }\n`,
    4,
    28,
    /^the value does not fit its YAML tag '!!float'/,
  ],
  [
    'aliases expand a billion-fold',
    'dsl',
    `x: &a [x, x, x, x, x, x, x, x, x]\ny: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nz: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nw: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\nv: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n${DSL_HEAD}steps:\n  a: { call: agent, agent: a, input_template: x }\n`,
    2,
    8,
    /^the aliases in this document expand to too many values/,
  ],
];

describe('Function: yamlValueIssues (through the front-ends)', () => {
  describe.each(['front-end', 'loadDocument', 'compileDocument'] as const)('Method: %s', (entry) => {
    it.each(CASES)('names it at its place when %s (%s)', (_, frontEnd, text, line, column, message) => {
      const { code } = FRONT_ENDS[frontEnd];
      let errors: readonly StepforgeError[];
      if (entry === 'front-end') errors = FRONT_ENDS[frontEnd].load(text).errors;
      else if (entry === 'loadDocument') errors = loadDocument(text, { file: 'f.yaml' }).errors;
      else {
        try {
          compileDocument(text, { file: 'f.yaml' });
          errors = [];
        } catch (e) {
          if (!isStepforgeError(e)) throw e;
          errors = [e];
        }
      }
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatchObject({
        name: 'StepforgeError',
        code,
        message: expect.stringMatching(message),
        location: expect.objectContaining({ line, column }),
      });
    });
  });

  it('loads documents whose aliases resolve, with the aliased values in place', () => {
    const chain = loadChainDocument(`base: &t { kind: model, prompt: "shared" }\nchain: "a@x > b"\ntasks:\n  a: *t\n  b: *t\n`, {
      file: 'ok.chain.yaml',
    });
    expect(chain.errors).toEqual([]);
    expect(chain.document!.steps.map((s) => (s.task as { prompt: string }).prompt)).toEqual(['shared', 'shared']);
    const dsl = loadDslDocument(
      `${DSL_HEAD}steps:\n  a: &s { call: agent, agent: a, input_template: !!str 1 }\n  b: { call: agent, agent: a, input_template: "\${ steps.a.output }" }\n`,
      { file: 'ok.yaml' },
    );
    expect(dsl.errors).toEqual([]);
    expect(dsl.document!.workflow.steps.map((s) => [s.name, s.inputTemplate?.value])).toEqual([
      ['a', '1'],
      ['b', '${ steps.a.output }'],
    ]);
  });
});
