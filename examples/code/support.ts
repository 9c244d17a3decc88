// Kortyx's support flow, written in code: classify the message, then answer it or start a refund.
// `stepforge compile examples/code/support.ts` compiles it to Step Functions (a Task per node, a
// Choice on what `classify` returned); the nodes run in the function handler.
import { defineWorkflow, type NodeResult } from 'stepforge';

/** Routes on what the customer asked: `condition` for refunds, `intent` for everything else. */
export async function classifyNode({ input }: { input: { message?: string } }): Promise<NodeResult> {
  const text = String(input.message ?? '').toLowerCase();
  if (text.includes('refund')) return { condition: 'refund', data: { topic: 'refund' } };
  return { intent: 'support.answer', data: { topic: 'question' } };
}

export function answerNode({ input, params }: { input: { topic?: string }; params: { signature: string } }): NodeResult {
  return { data: { reply: `Thanks for your ${input.topic}. ${params.signature}` }, ui: { message: 'answered' } };
}

export function refundNode(): NodeResult {
  return { data: { reply: 'Your refund has been started.' } };
}

export const supportWorkflow = defineWorkflow({
  id: 'support',
  version: '1.0.0',
  description: 'Simple support flow',
  nodes: {
    classify: { run: classifyNode, params: {}, behavior: { retry: { maxAttempts: 2, delayMs: 200 } } },
    answer: { run: answerNode, params: { signature: '— the support team' } },
    refund: { run: refundNode },
  },
  edges: [
    ['__start__', 'classify'],
    ['classify', 'refund', { when: 'refund' }],
    ['classify', 'answer', { when: 'support.answer' }],
    ['answer', '__end__'],
    ['refund', '__end__'],
  ],
});
