// The editor schema for chain documents (schemas/chain.schema.json) must accept every chain document
// the repository ships and flag what the loader refuses as a wrong shape.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { chainJsonSchemaText } from '../../src/chain/chainJsonSchema.js';
import { loadChainDocument } from '../../src/chain/loadChainDocument.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const text = readFileSync(`${ROOT}schemas/chain.schema.json`, 'utf8');
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(text) as object);

describe('File: schemas/chain.schema.json', () => {
  it("is what the generator writes from the loader's schemas (npx tsx schemas/generate.ts)", () => {
    expect(text).toBe(chainJsonSchemaText());
  });

  it('accepts every chain document in examples/ and workflows/', () => {
    const files = ['examples', 'workflows'].flatMap((d) =>
      readdirSync(`${ROOT}${d}`)
        .filter((f) => f.endsWith('.chain.yaml'))
        .map((f) => `${d}/${f}`),
    );
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const f of files) {
      const ok = validate(parse(readFileSync(`${ROOT}${f}`, 'utf8')));
      expect([f, ok, validate.errors ?? null]).toEqual([f, true, null]);
    }
  });

  it('rejects the shapes the loader refuses, and the loader agrees on each', () => {
    const base = { chain: 'a > b', tasks: { a: { kind: 'model', prompt: 'p' }, b: { kind: 'tool', tool: 'web-search' } } };
    expect(validate(base)).toBe(true);
    const bad: Record<string, unknown>[] = [
      { ...base, chian: 'x' },
      { ...base, tasks: { ...base.tasks, a: { kind: 'modle', prompt: 'p' } } },
      { ...base, tasks: { ...base.tasks, a: { kind: 'model' } } },
      { ...base, tasks: { ...base.tasks, a: { kind: 'model', prompt: 'p', model: 'claude' } } },
      { ...base, tasks: { ...base.tasks, b: { kind: 'tool' } } },
      { ...base, tasks: { ...base.tasks, a: { kind: 'model', prompt: 'p', retry: { max_attempts: 3, jitter: 'SOME' } } } },
      { ...base, express: 'yes' },
      { ...base, name: 'has spaces' },
    ];
    for (const doc of bad) {
      expect([doc, validate(doc)]).toEqual([doc, false]);
      // The loader refuses the same document (an error, not only a warning) or warns of the unknown field.
      const r = loadChainDocument(JSON.stringify(doc), { file: 'x.chain.yaml' });
      expect([doc, r.errors.length + r.warnings.filter((w) => w.code === 'unknown_field').length > 0]).toEqual([doc, true]);
    }
  });

  it('accepts tasks written without kind, as Kortecx allows, where the loader infers one, and refuses the same misfits', () => {
    const doc = {
      chain: 'plan@web-search > fetch > review',
      tasks: {
        plan: { model_id: 'kx-serve:qwen3-4b-q4_k_m', prompt: 'Research the topic.' },
        fetch: { tool_contract: { 'fs-list': '1' }, args: { path: '.' } },
        review: {},
      },
    };
    expect([validate(doc), validate.errors ?? null]).toEqual([true, null]);
    const r = loadChainDocument(JSON.stringify(doc), { file: 'x.chain.yaml' });
    expect(r.errors.map(String)).toEqual([]);
    expect(r.document?.steps.map((s) => [s.handle, s.kind])).toEqual([
      ['plan', 'model'],
      ['fetch', 'tool'],
      ['review', 'pure'],
    ]);
    for (const task of [{ args: { path: '.' } }, { prompt: 'p', tool: 'fs-list' }, { model_id: 'm' }]) {
      const bad = { ...doc, tasks: { ...doc.tasks, review: task } };
      expect([task, validate(bad)]).toEqual([task, false]);
      const loaded = loadChainDocument(JSON.stringify(bad), { file: 'x.chain.yaml' });
      expect([task, loaded.errors.map((e) => e.code)]).toEqual([task, ['invalid_task']]);
    }
  });
});
