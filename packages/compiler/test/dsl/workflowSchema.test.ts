// The editor schema (schemas/workflow.schema.json) must accept every valid corpus document and flag
// unknown fields and wrong shapes, like the loader does. ajv is the validator asl-validator (a root
// devDependency) already brings in; editors use their own, equivalent draft 2020-12 validators.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const schema = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../../schemas/workflow.schema.json', import.meta.url)), 'utf8'),
) as object;
const dir = fileURLToPath(new URL('./corpus/', import.meta.url));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

describe('File: schemas/workflow.schema.json', () => {
  it('accepts every valid corpus document except the one with an unknown field', () => {
    const rejected: string[] = [];
    for (const f of readdirSync(dir)
      .filter((x) => x.startsWith('v'))
      .sort()) {
      if (!validate(parse(readFileSync(dir + f, 'utf8')))) rejected.push(f);
    }
    expect(rejected).toEqual(['v18-unknown-field-warning.yaml']);
  });

  it('rejects wrong shapes the loader reports as schema errors', () => {
    for (const f of [
      'e05-wrong-type.yaml',
      'e06-unknown-kind.yaml',
      'e07-missing-required-field.yaml',
      'e30-bad-step-name.yaml',
      'e33-bad-retry.yaml',
      'e34-list-form.yaml',
      'e35-kind-instead-of-call.yaml',
      'e36-do-list.yaml',
      'e38-both-spellings.yaml',
      'e39-missing-aggregator.yaml',
      'e40-output-not-a-name.yaml',
      'e41-empty-steps.yaml',
      'e43-misspelt-call-nested.yaml',
    ]) {
      expect([f, validate(parse(readFileSync(dir + f, 'utf8')))]).toEqual([f, false]);
    }
  });

  it('checks names, agent settings, roles, output names and spellings as the loader does', () => {
    const doc = (over: Record<string, unknown>, step: Record<string, unknown> = {}) => ({
      document: { dsl: '1.0', name: 'ok' },
      agents: { a: {} },
      steps: { s: { call: 'agent', agent: 'a', ...step } },
      ...over,
    });
    expect(validate(doc({}))).toBe(true);
    const bad = [
      // A display name is any text, but not none.
      doc({ document: { dsl: '1.0', name: '   ' } }),
      doc({ agents: { a: { tools: 'web-search' } } }),
      doc({ agents: { a: { temperature: 'hot' } } }),
      doc({ triggers: [{ name: 'bad name!', event_pattern: { source: ['x'] } }] }),
      doc({}, { output: { type: 'object' } }),
      doc({}, { call: 'handoff_router', agent: undefined, entry_agent: 'a', specialists: [{ agent: 'a', role: '' }] }),
      doc({}, { call: 'judge_loop', agent: undefined, generator: 'a', worker_agent: 'a', evaluator: 'a' }),
      doc({}, { call: 'judge_loop', agent: undefined, generator: 'a' }),
      doc({}, { call: 'parallel_analyzer', agent: undefined, agents: [{ agent: 'a', focus: 'x' }] }),
      doc({ steps: [{ name: 's', kind: 'agent', agent: 'a' }] }),
      doc({ steps: {} }),
      doc({}, { call: 'for_each', agent: undefined, items: [1], do: {} }),
    ];
    expect(bad.map((d) => validate(JSON.parse(JSON.stringify(d))))).toEqual(bad.map(() => false));
    const good = [
      doc({ document: { dsl: '1.0', name: 'Triage — EU / ../../escaped' } }),
      doc({}, { output: 'summary' }),
      doc({}, { call: 'judge_loop', agent: undefined, worker_agent: 'a', judge_agent: 'a' }),
      doc({}, { call: 'parallel_analyzer', agent: undefined, agents: [{ agent: 'a', focus: 'x' }], aggregator_agent: 'a' }),
      doc({ agents: { a: '' } }, { call: 'for_each', agent: undefined, items: [1], do: { t: { call: 'agent', agent: 'a' } } }),
    ];
    expect(good.map((d) => validate(JSON.parse(JSON.stringify(d))))).toEqual(good.map(() => true));
  });

  it("offers the call: values and each kind's fields, as yaml-language-server completes them", () => {
    // A step is a oneOf discriminated by its `call` constant: the language server offers the constants
    // for `call:`, then the properties of the option whose constant matches.
    const root = schema as {
      properties: { steps: { additionalProperties: { $ref: string }; minProperties: number } };
      $defs: Record<string, { oneOf: { properties: Record<string, { const?: string }>; required: string[] }[] }>;
    };
    expect(root.properties.steps.additionalProperties.$ref).toBe('#/$defs/step');
    expect(root.properties.steps.minProperties).toBe(1);
    const options = root.$defs.step!.oneOf;
    expect(options.map((o) => o.properties.call!.const)).toEqual([
      'agent',
      'function',
      'mcp_tool',
      'connector',
      'conditional',
      'for_each',
      'while',
      'parallel_analyzer',
      'handoff_router',
      'judge_loop',
    ]);
    const fields = Object.fromEntries(
      options.map((o) => [
        o.properties.call!.const,
        Object.keys(o.properties).filter(
          (k) => !['call', 'description', 'input', 'input_template', 'secrets', 'output', 'after', 'when', 'retry'].includes(k),
        ),
      ]),
    );
    expect(fields).toEqual({
      agent: ['agent'],
      function: ['function'],
      mcp_tool: ['server', 'tool'],
      connector: ['connector', 'action'],
      conditional: ['condition', 'then', 'else'],
      for_each: ['items', 'as', 'max_iterations', 'parallel', 'do'],
      while: ['condition', 'max_iterations', 'do'],
      parallel_analyzer: ['analysts', 'aggregator', 'agents', 'aggregator_agent'],
      handoff_router: ['entry_agent', 'specialists'],
      judge_loop: ['generator', 'evaluator', 'worker_agent', 'judge_agent', 'pass_condition', 'max_iterations'],
    });
    for (const o of options) expect(o.required[0]).toBe('call');
    // `do:` bodies are step mappings of the same shape.
    const forEach = options.find((o) => o.properties.call!.const === 'for_each')!.properties as unknown as {
      do: { additionalProperties: { $ref: string } };
    };
    expect(forEach.do.additionalProperties.$ref).toBe('#/$defs/step');
  });
});
