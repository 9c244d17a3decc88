// The editor schema (schemas/workflow.schema.json) must accept every valid corpus document and flag
// unknown fields and wrong shapes, like the loader does. ajv is the validator asl-validator (a root
// devDependency) already brings in; editors use their own, equivalent draft 2020-12 validators.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const schema = JSON.parse(readFileSync(fileURLToPath(new URL('../../../../schemas/workflow.schema.json', import.meta.url)), 'utf8')) as object;
const dir = fileURLToPath(new URL('./corpus/', import.meta.url));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

describe('File: schemas/workflow.schema.json', () => {
  it('accepts every valid corpus document except the one with an unknown field', () => {
    const rejected: string[] = [];
    for (const f of readdirSync(dir).filter((x) => x.startsWith('v')).sort()) {
      if (!validate(parse(readFileSync(dir + f, 'utf8')))) rejected.push(f);
    }
    expect(rejected).toEqual(['v18-unknown-field-warning.yaml']);
  });

  it('rejects wrong shapes the loader reports as schema errors', () => {
    for (const f of ['e05-wrong-type.yaml', 'e06-unknown-kind.yaml', 'e07-missing-required-field.yaml', 'e30-bad-step-name.yaml', 'e33-bad-retry.yaml']) {
      expect([f, validate(parse(readFileSync(dir + f, 'utf8')))]).toEqual([f, false]);
    }
  });

  it('checks names, agent settings, roles and declared outputs as the loader does', () => {
    const doc = (over: Record<string, unknown>, step: Record<string, unknown> = {}) => ({
      document: { dsl: '1.0', name: 'ok' }, agents: { a: {} }, steps: [{ name: 's', kind: 'agent', agent: 'a', ...step }], ...over,
    });
    expect(validate(doc({}))).toBe(true);
    const bad = [
      doc({ document: { dsl: '1.0', name: '../../escaped' } }),
      doc({ agents: { a: { tools: 'web-search' } } }),
      doc({ agents: { a: { temperature: 'hot' } } }),
      doc({ triggers: [{ name: 'bad name!', event_pattern: { source: ['x'] } }] }),
      doc({}, { output: 'yaml' }),
      doc({}, { kind: 'handoff_router', agent: undefined, entry_agent: 'a', specialists: [{ agent: 'a', role: '' }] }),
    ];
    expect(bad.map((d) => validate(JSON.parse(JSON.stringify(d))))).toEqual(bad.map(() => false));
  });
});
