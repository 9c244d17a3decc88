import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadChainDocument, loadChainExpression, type GraphView, type StepforgeError } from '../../src/index.js';

interface CorpusCase {
  name: string;
  expr?: string;
  document?: string;
  level?: 'topology' | 'full';
  nodes?: string[];
  kinds?: string[];
  edges?: [number, number][];
  warnings?: string[];
  error?: { class: string; line: number; column: number; message: string };
}

const corpus = parse(readFileSync(new URL('./corpus.yaml', import.meta.url), 'utf8')) as CorpusCase[];

/** `handle@t1@t2` → {handle, tools}. */
function compact(n: string): { handle: string; tools: string[] } {
  const [handle, ...tools] = n.split('@');
  return { handle: handle!, tools };
}

function load(c: CorpusCase): { graph?: GraphView; errors: StepforgeError[]; warnings: string[] } {
  if (c.expr !== undefined) return { ...loadChainExpression(c.expr), warnings: [] };
  const r = loadChainDocument(c.document!, { level: c.level ?? 'full' });
  return {
    graph: r.graph,
    errors: r.errors,
    warnings: r.warnings.map((w) => `${w.code} ${w.location?.line}:${w.location?.column} ${w.message}`),
  };
}

describe('Function: loadChainDocument (golden corpus)', () => {
  it('has at least 40 cases covering graphs and every error class', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    const classes = new Set(corpus.flatMap((c) => (c.error ? [c.error.class] : [])));
    expect([...classes].sort()).toEqual([
      'agentic_non_model',
      'cycle',
      'invalid_document',
      'invalid_task',
      'parse',
      'tier_limit',
      'unknown_handle',
    ]);
  });

  it.each(corpus.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const r = load(c);
    if (c.error) {
      expect(r.graph === undefined || r.errors.length > 0).toBe(true);
      const first = r.errors[0];
      expect(first && { class: first.code, line: first.location?.line, column: first.location?.column, message: first.message }).toEqual(
        c.error,
      );
      return;
    }
    expect(r.errors.map(String)).toEqual([]);
    expect(r.graph).toBeDefined();
    const expected = c.nodes!.map(compact);
    const kinds = c.kinds ?? expected.map(() => 'model');
    expect(r.graph!.nodes).toEqual(expected.map((n, i) => ({ ...n, kind: kinds[i] })));
    expect(r.graph!.edges).toEqual(c.edges);
    expect(r.warnings).toEqual(c.warnings ?? []);
  });
});
