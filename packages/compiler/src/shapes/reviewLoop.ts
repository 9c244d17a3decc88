import { z } from 'zod';
import type { ChainDocumentSource } from './ChainDocumentSource.js';
import { CommonShapeOptions, count, DEFAULT_TOOLS, modelTask, parseShapeOptions, tagged, TASK_INPUT } from './shapeOptions.js';

/** Options of the review-loop shape. */
export const ReviewLoopOptions = z.strictObject({ ...CommonShapeOptions, rounds: count(32).default(2) });

/**
 * Review loop: a worker drafts, then each round a reviewer critiques and a reviser revises, unrolled
 * into distinct steps with stable names (`worker > review_1 > revise_1 > review_2 > revise_2 …`), so the
 * graph stays acyclic and every round is visible.
 */
export function reviewLoop(options: z.input<typeof ReviewLoopOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('review-loop', ReviewLoopOptions, options);
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const entries: [string, ChainDocumentSource['tasks'][string]][] = [
    ['worker', modelTask('Produce a first version for: ${input.task}', o.model)],
  ];
  const chain = [tagged('worker', tools)];
  let latest = 'worker';
  for (let r = 1; r <= o.rounds; r++) {
    const review = `review_${r}`;
    const revise = `revise_${r}`;
    entries.push([
      review,
      modelTask(`Review round ${r}: list concrete problems with this version of "\${input.task}":\n\${steps.${latest}.output}`, o.model),
    ]);
    entries.push([
      revise,
      modelTask(
        `Revise the version below to fix every problem the review lists.\nVersion:\n\${steps.${latest}.output}\nReview:\n\${steps.${review}.output}`,
        o.model,
      ),
    ]);
    chain.push(review, revise);
    latest = revise;
  }
  return {
    name: o.name ?? 'review-loop',
    description: `Review loop: a worker, then ${o.rounds} review/revise round(s), unrolled.`,
    input: TASK_INPUT,
    chain: chain.join(' > '),
    tasks: Object.fromEntries(entries),
  };
}
