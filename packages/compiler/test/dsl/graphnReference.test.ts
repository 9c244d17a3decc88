// The GraphN reference's YAML examples (graphn-reference/, transcribed as printed) through the
// compiler: each validates, graphs (every step of the example a node of its `call:` kind, every
// `after:` an edge) and compiles to ASL that asl-validator accepts, or is refused with the error its
// case names and says why. test/e2e/graphnReference.test.ts runs them on the embedded stack.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compileDocument, loadDocument, workflowSlug } from '@stepforge/compiler';
import { REFERENCE_CASES, WRAPPER_FILE, composeCase, displayNameOf, exampleText, type ReferenceCase } from './graphn-reference/cases.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };
const DIR = fileURLToPath(new URL('./graphn-reference/', import.meta.url));

/** Every step of a document's `steps:` mapping and its `do:` bodies: [name, call, after]. */
function stepsOf(steps: unknown): [string, string, string[]][] {
  if (steps === null || typeof steps !== 'object' || Array.isArray(steps)) return [];
  return Object.entries(steps as Record<string, Record<string, unknown>>).flatMap(([name, s]) => {
    const after = s['after'] === undefined ? [] : Array.isArray(s['after']) ? (s['after'] as string[]) : [s['after'] as string];
    return [[name, String(s['call']), after] as [string, string, string[]], ...stepsOf(s['do'])];
  });
}

const fileOf = (c: ReferenceCase) => (c.form === 'document' ? c.file : `${c.file} (in ${WRAPPER_FILE})`);

describe('Corpus: the GraphN reference examples', () => {
  it('has a case for every example in the folder, and the README names each one with its source', () => {
    const examples = readdirSync(DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(examples.length).toBeGreaterThanOrEqual(30);
    expect([...REFERENCE_CASES.map((c) => c.file), WRAPPER_FILE].sort()).toEqual(examples);
    const readme = readFileSync(`${DIR}README.md`, 'utf8');
    for (const f of examples) expect(readme, f).toContain(`\`${f}\``);
  });

  it('gives every case that runs its own workflow name (each is its own state machine on one stack)', () => {
    const slugs = REFERENCE_CASES.filter((c) => 'runs' in c.outcome).map((c) =>
      workflowSlug(
        c.form === 'document' ? String((parse(exampleText(c.file)) as { document: { name: string } }).document.name) : displayNameOf(c),
      ),
    );
    expect(new Set(slugs).size).toBe(slugs.length);
  });

  for (const c of REFERENCE_CASES) {
    const { text, offset } = composeCase(c);
    if ('refused' in c.outcome) {
      const { refused, why } = c.outcome;
      it(`refuses ${fileOf(c)} with error[${refused.class}]: ${why}`, () => {
        const r = loadDocument(text, { file: c.file });
        expect(r.errors.length, text).toBeGreaterThan(0);
        const e = r.errors[0]!;
        expect(e.code, e.message).toBe(refused.class);
        // Lines are the example file's: where a person reading the corpus finds them.
        if (refused.line !== undefined) expect(e.location?.line, e.message).toBe(refused.line + offset);
        if (refused.message !== undefined) expect(e.message).toContain(refused.message);
      });
      continue;
    }
    it(`validates, graphs and compiles ${fileOf(c)} to ASL that asl-validator accepts`, () => {
      const loaded = loadDocument(text, { file: c.file });
      expect(
        loaded.errors.map((e) => `${e.code} ${e.location?.line}:${e.location?.column} ${e.message}`),
        text,
      ).toEqual([]);
      const warnings = (c.outcome as { warnings?: readonly { class: string; line?: number; message?: string }[] }).warnings ?? [];
      expect(loaded.warnings.map((w) => [w.code, w.location!.line - offset])).toEqual(warnings.map((w) => [w.class, w.line]));
      warnings.forEach((w, i) => expect(loaded.warnings[i]!.message).toContain(w.message ?? ''));
      expect(loaded.format).toBe('dsl');
      const graph = loadDocument(text, { file: c.file, level: 'topology' }).graph!;
      const handles = graph.nodes.map((n) => n.handle);
      const steps = stepsOf((parse(text) as { steps: unknown }).steps);
      for (const [name, call, after] of steps) {
        const node = graph.nodes.find((n) => n.handle === name);
        expect(node, `step ${name}`).toBeDefined();
        expect(node!.kind, `step ${name}`).toBe(call);
        for (const a of after) expect(graph.edges, `${a} -> ${name}`).toContainEqual([handles.indexOf(a), handles.indexOf(name)]);
      }
      const compiled = compileDocument(text, { file: c.file });
      const v = aslValidator(structuredClone(compiled.asl));
      expect(v.isValid, v.errorsText('\n')).toBe(true);
      const display = c.form === 'document' ? String((parse(text) as { document: { name: string } }).document.name) : displayNameOf(c);
      expect([compiled.name, compiled.displayName]).toEqual([workflowSlug(display), display]);
      expect(String(compiled.asl['Comment'])).toMatch(
        new RegExp(`^${display.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — compiled by Stepforge`),
      );
      expect(compiled.manifest.steps.map((s) => s.id)).toEqual(expect.arrayContaining(steps.map(([n]) => n)));
    });
  }
});
