import { describe, expect, it } from 'vitest';
import { dslSchemas } from '../../src/dsl/DslSchema.js';
import yaml from 'js-yaml';
import { plainDocumentData, plainStepData } from '../../src/dsl/plainStepData.js';
import { mulberry32 } from '../../../../test/support/mulberry32.js';
import { thousandStepDsl } from '../../../../bench/compile.bench.js';

/** The parsed step as a list of [key, value] pairs in key order (toEqual alone ignores key order). */
function pairs(v: Record<string, unknown>): [string, unknown][] {
  return Object.keys(v).map((k) => [k, v[k]]);
}

/** Values each field is tried with: valid ones and every kind of wrong one. */
const CHOICES: Record<string, readonly unknown[]> = {
  call: ['agent', 'function', 'mcp_tool', 'conditional', 'agnet', '', 1, null],
  agent: ['worker', '', 3, null, ['worker'], { name: 'worker' }],
  function: ['f', '', false, null],
  description: ['does x', '', 2, null],
  input: ['${ input.topic }', { text: '${ steps.a.output }' }, null, 0, ['a'], ''],
  input_template: ['${ steps.a.output }', '', 5, null, ['x']],
  output: ['summary', '', '  ', 'a b', 1, null],
  after: ['a', '', ['a', 'b'], [], ['a', ''], ['a', 1], 7, null],
  when: ['${ input.go }', true, false, '', 0, null],
  secrets: [{ KEY: '$secret:x' }],
  retry: [{ max_attempts: 2 }],
  agnet: ['worker'],
  kind: ['agent'],
};

/** A random step: each field present or not, with one of its values. */
function randomStep(rand: () => number): Record<string, unknown> {
  const step: Record<string, unknown> = {};
  const keys = Object.keys(CHOICES);
  // Fields in a random order: the parsed step's order must not depend on the written one.
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  for (const k of keys) {
    const rare = k === 'secrets' || k === 'retry' || k === 'agnet' || k === 'kind';
    if (rand() < (k === 'call' ? 0.95 : rare ? 0.05 : 0.5)) {
      const choices = CHOICES[k]!;
      // Mostly the first (valid) values, so that many steps are plain.
      step[k] = choices[rand() < 0.6 ? 0 : Math.floor(rand() * choices.length)];
    }
  }
  if (step.call === 'agent' && rand() < 0.8) step.agent = 'worker';
  if (step.call === 'function' && rand() < 0.8) step.function = 'f';
  return step;
}

describe('Function: plainStepData', () => {
  it('gives what DslStepSpec gives, keys in the same order, or leaves the step to zod', () => {
    const { DslStepSpec } = dslSchemas();
    const rand = mulberry32(11);
    let plain = 0;
    for (let n = 0; n < 5000; n++) {
      const raw = randomStep(rand);
      const mine = plainStepData(raw);
      if (mine === undefined) continue;
      plain++;
      const zod = DslStepSpec.safeParse(raw);
      expect(zod.success, JSON.stringify(raw)).toBe(true);
      expect(pairs(mine), JSON.stringify(raw)).toEqual(pairs(zod.data as Record<string, unknown>));
      // The value of `input` is the one written (zod's unknown); a list of `after` is a copy (zod's array).
      expect(mine.input).toBe(raw.input);
      if (Array.isArray(raw.after)) expect(mine.after).not.toBe(raw.after);
    }
    // Enough of the generated steps were plain for the comparison to mean something.
    expect(plain).toBeGreaterThan(500);
  });

  it('leaves other kinds, secrets, retry policies and unknown fields to zod', () => {
    expect(plainStepData({ call: 'agent', agent: 'w', secrets: ['$secret:x'] })).toBeUndefined();
    expect(plainStepData({ call: 'agent', agent: 'w', retry: { max_attempts: 2 } })).toBeUndefined();
    expect(plainStepData({ call: 'agent', agent: 'w', agnet: 'w' })).toBeUndefined();
    expect(plainStepData({ call: 'while', condition: true, do: {} })).toBeUndefined();
    expect(plainStepData({ call: 'function', agent: 'w' })).toBeUndefined();
    expect(plainStepData(['agent'])).toBeUndefined();
    expect(plainStepData(null)).toBeUndefined();
  });

  it('gives what DslDocumentSpec gives for a whole document, or leaves it to zod', () => {
    const { DslDocumentSpec } = dslSchemas();
    const documents = [
      thousandStepDsl(200),
      // Every top-level section the shell checks, around plain steps.
      [
        'document: { dsl: "1.0", name: Plain, version: 2, description: d }',
        'agents: { worker: { model: "bedrock:m", tools: [web-search] }, other: "" }',
        'functions: { f: {} }',
        'secrets: { KEY: "$secret:k" }',
        'input: { topic: string, n: { type: number, default: 2 } }',
        'express: true',
        'steps:',
        '  a: { call: agent, agent: worker, input_template: "${ input.topic }", output: first, when: true }',
        '  b: { call: function, function: f, input: { x: "${ steps.a.output }", y: [1, 2] }, after: [a] }',
        'output: "${ steps.b.output }"',
      ].join('\n'),
      // Not plain: zod parses it (a step with secrets), or reports it (a bad step name, no steps).
      'document: { dsl: "1.0", name: x }\nagents: { w: {} }\nsteps:\n  a: { call: agent, agent: w, secrets: [$secret:k] }\n',
      'document: { dsl: "1.0", name: x }\nagents: { w: {} }\nsteps:\n  9a: { call: agent, agent: w }\n',
      'document: { dsl: "1.0", name: x }\nsteps: {}\n',
      'document: { dsl: "1.0", name: x, colour: red }\nagents: { w: {} }\nsteps:\n  a: { call: agent, agent: w }\n',
    ];
    const outcomes: string[] = [];
    for (const text of documents) {
      const raw = yaml.load(text) as Record<string, unknown>;
      const zod = DslDocumentSpec.safeParse(structuredClone(raw));
      const mine = plainDocumentData(raw);
      outcomes.push(mine === undefined ? (zod.success ? 'zod' : 'error') : 'plain');
      if (mine === undefined) continue;
      expect(zod.success).toBe(true);
      const parsed = zod.data as Record<string, unknown>;
      // Same sections in the same order, each the same value; every step the same keys in the same order.
      expect(JSON.stringify(mine)).toBe(JSON.stringify(parsed));
      expect(mine).toEqual(parsed);
      const steps = parsed.steps as Record<string, Record<string, unknown>>;
      for (const [name, step] of Object.entries(mine.steps as Record<string, Record<string, unknown>>))
        expect(pairs(step), name).toEqual(pairs(steps[name]!));
    }
    expect(outcomes).toEqual(['plain', 'plain', 'zod', 'error', 'error', 'error']);
  });
});
