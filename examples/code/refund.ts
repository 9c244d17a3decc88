// A Kortyx workflow calling another with useWorkflow: `refund` asks the callable workflow
// `refund-quote` for the amount to pay back. The child runs as its own state machine, a nested
// execution of the parent's `quote` node; its input and output are checked against its zod schemas.
import { z } from 'zod';
import { defineWorkflow, useWorkflow, type NodeResult } from 'stepforge';

/** The callable workflow: what a refund of `amount` for an order of `days` age pays back. */
export const refundQuote = defineWorkflow({
  id: 'refund-quote', version: '1.0.0', description: 'Quotes a refund',
  inputSchema: z.object({ amount: z.number().positive(), days: z.number().int().min(0) }),
  outputSchema: z.object({ refund: z.number().min(0), policy: z.string() }),
  nodes: {
    quote: {
      run: ({ input }: { input: { amount: number; days: number } }): NodeResult => {
        const full = input.days <= 30;
        return { data: { refund: full ? input.amount : Math.round(input.amount * 50) / 100, policy: full ? 'full' : 'half' } };
      },
    },
  },
  edges: [['__start__', 'quote'], ['quote', '__end__']],
});

/** The caller: quotes through the child, then answers with what it returned. */
export const refund = defineWorkflow({
  id: 'refund', version: '1.0.0', description: 'Refunds an order',
  nodes: {
    // The child's input from the run state; its checked output is merged into the run state.
    quote: { run: useWorkflow(refundQuote, (s: { order: { total: number; ageDays: number } }) => ({ amount: s.order.total, days: s.order.ageDays })) },
    reply: { run: ({ input }: { input: { refund: number; policy: string } }): NodeResult => ({ data: { reply: `We refund ${input.refund} (${input.policy} refund).` } }) },
  },
  edges: [['__start__', 'quote'], ['quote', 'reply'], ['reply', '__end__']],
});
