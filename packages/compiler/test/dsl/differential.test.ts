// The differential test: the TypeScript evaluator and the JSONata translation (run by the `jsonata`
// package, with `$parse` bound as Step Functions provides it) must agree on every generated
// expression × context, in value mode and in condition mode. Errors must agree too (both fail).
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import {
  evaluateCondition,
  evaluateTemplate,
  isStepforgeError,
  parseTemplate,
  templateToJsonata,
  type PathRoot,
} from '@stepforge/compiler';
import { context, rng, template } from './exprCorpus.js';

const resolveRoot = (root: PathRoot): string => (root.kind === 'input' ? '$input' : `$lookup($steps, ${JSON.stringify(root.step)})`);

type Outcome = { ok: true; value: string } | { ok: false; error: string };

function show(v: unknown): string {
  return v === undefined ? '<undefined>' : JSON.stringify(v);
}

function runTs(f: () => unknown): Outcome {
  try {
    return { ok: true, value: show(f()) };
  } catch (e) {
    if (!isStepforgeError(e) || e.code !== 'expression_eval') throw e;
    return { ok: false, error: e.code };
  }
}

async function runJsonata(expr: jsonata.Expression, ctx: ReturnType<typeof context>): Promise<Outcome> {
  const outputs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(ctx.steps)) outputs[k] = v.output;
  try {
    const v: unknown = await expr.evaluate({}, { input: ctx.input, steps: outputs, parse: (s: string) => JSON.parse(s) as unknown });
    return { ok: true, value: show(v) };
  } catch (e) {
    // Only a failed $parse may fail; anything else (a translation bug) shows up as a mismatch.
    return { ok: false, error: /JSON/.test((e as Error).message) ? 'expression_eval' : `jsonata: ${(e as Error).message}` };
  }
}

async function differential(seed: number, expressions: number, contextsPer: number) {
  const r = rng(seed);
  const mismatches: string[] = [];
  const kinds = new Map<string, number>();
  const tally = (o: Outcome): void => {
    const k = !o.ok
      ? 'error'
      : o.value === 'null'
        ? 'null'
        : o.value === '""'
          ? 'blank'
          : o.value.startsWith('"')
            ? 'string'
            : o.value === 'true' || o.value === 'false'
              ? o.value
              : /^[-\d]/.test(o.value)
                ? 'number'
                : 'json';
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  };
  let cases = 0;
  for (let i = 0; i < expressions; i++) {
    const text = template(r);
    const t = parseTemplate(text);
    const value = jsonata(templateToJsonata(t, { resolveRoot }));
    const cond = jsonata(templateToJsonata(t, { resolveRoot, mode: 'condition' }));
    for (let j = 0; j < contextsPer; j++) {
      const ctx = context(r);
      cases++;
      const a = runTs(() => evaluateTemplate(t, ctx));
      const b = await runJsonata(value, ctx);
      tally(a);
      if (JSON.stringify(a) !== JSON.stringify(b))
        mismatches.push(`${text}\n  ctx=${JSON.stringify(ctx)}\n  ts=${JSON.stringify(a)} jsonata=${JSON.stringify(b)}`);
      const c = runTs(() => evaluateCondition(t, ctx));
      const d = await runJsonata(cond, ctx);
      if (JSON.stringify(c) !== JSON.stringify(d))
        mismatches.push(`[condition] ${text}\n  ctx=${JSON.stringify(ctx)}\n  ts=${JSON.stringify(c)} jsonata=${JSON.stringify(d)}`);
    }
  }
  return { cases, mismatches, kinds };
}

describe('Function: templateToJsonata (differential against evaluateTemplate)', () => {
  it('agrees on 600 generated expressions × 3 contexts, in value and condition mode', async () => {
    const { cases, mismatches, kinds } = await differential(20261130, 600, 3);
    expect(cases).toBe(1800);
    // The corpus must exercise every kind of outcome, or agreement would prove little.
    for (const k of ['null', 'blank', 'string', 'true', 'false', 'number', 'json', 'error'])
      expect([k, kinds.get(k) ?? 0]).not.toEqual([k, 0]);
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it.runIf(process.env.STEPFORGE_LONG)(
    'agrees on 10,000 expressions × 5 contexts, both modes: 100,000 comparisons (STEPFORGE_LONG)',
    async () => {
      const { cases, mismatches } = await differential(7, 10_000, 5);
      expect(cases).toBe(50_000);
      expect(mismatches.slice(0, 5)).toEqual([]);
    },
    3_000_000,
  );
});
