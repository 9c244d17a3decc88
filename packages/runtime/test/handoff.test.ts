import { describe, expect, it } from 'vitest';
import type { StepEnvelope } from '@stepforge/contract';
import { handoffChoice, handoffTargets } from '../src/steps/handoff.js';

const env = (role: string | undefined, specialists: unknown, kind = 'agent') =>
  ({ step: { id: 'route', kind, identity: 'i', role }, config: { specialists } }) as unknown as StepEnvelope;
const SPECIALISTS = [
  { agent: 'billing', role: 'invoices, refunds and double charges' },
  { agent: 'tech', role: 'product problems and bugs' },
  { agent: 'tech2', role: 'product.problems and bugs' },
];

describe('Function: handoffTargets', () => {
  it('gives the entry agent every specialist and a specialist the others, with unique provider-safe tool names', () => {
    expect(handoffTargets(env('entry', SPECIALISTS)).map((t) => t.tool)).toEqual([
      'transfer_to_invoices__refunds_and_double_charges',
      'transfer_to_product_problems_and_bugs',
      'transfer_to_product_problems_and_bugs_2',
    ]);
    expect(handoffTargets(env('product problems and bugs', SPECIALISTS)).map((t) => t.agent)).toEqual(['billing', 'tech2']);
    expect(handoffTargets(env('entry', [{ agent: 'a', role: 'r'.repeat(100) }]))[0]!.tool).toHaveLength(64);
  });

  it('gives no targets to other steps', () => {
    expect(handoffTargets(env('entry', undefined))).toEqual([]);
    expect(handoffTargets(env('analyst', SPECIALISTS))).toEqual([]);
    expect(handoffTargets(env('entry', SPECIALISTS, 'model'))).toEqual([]);
  });
});

describe('Function: handoffChoice', () => {
  const targets = handoffTargets(env('entry', SPECIALISTS));
  const text = (t: string) => handoffChoice({ text: t, toolCalls: [] }, targets);

  it('reads JSON text, fenced or in prose, by role or agent name, and keeps the other fields', () => {
    expect(text('{"handoff":"Product problems and bugs "}')).toEqual({ handoff: 'product problems and bugs' });
    expect(text('Sure.\n```json\n{"transfer_to": "billing", "reason": "refund"}\n```')).toEqual({
      handoff: 'invoices, refunds and double charges',
      reason: 'refund',
    });
    expect(text('I think {"note": "a } in a string"} then {"handoff": "tech2"} fits')).toEqual({ handoff: 'product.problems and bugs' });
  });

  it('reads a transfer tool call, with its arguments and any text', () => {
    const call = { id: 'c', tool: 'transfer_to_product_problems_and_bugs', args: { reason: 'crash' } };
    expect(handoffChoice({ text: 'Passing you on.', toolCalls: [call] }, targets)).toEqual({
      handoff: 'product problems and bugs',
      reason: 'crash',
      message: 'Passing you on.',
    });
  });

  it('is undefined for an answer, an unknown role, or a step without targets', () => {
    expect(text('Refunds take five days.')).toBeUndefined();
    expect(text('{"handoff":"shipping"}')).toBeUndefined();
    expect(handoffChoice({ text: '{"handoff":"tech"}', toolCalls: [] }, [])).toBeUndefined();
  });
});
