import { isDeepStrictEqual } from 'node:util';
import { RuntimeError } from '../errors/RuntimeError.js';

/**
 * A consensus judge must answer with one of the candidates verbatim (the compiler sends them as
 * `inputs.candidates`, resolved from references by now): anything else fails the step, so the run
 * ends with JudgeChoiceNotCandidate rather than carrying a paraphrase forward as the consensus.
 */
export function checkCandidate(stepId: string, answer: unknown, candidates: Readonly<Record<string, unknown>>): void {
  if (Object.values(candidates).some((c) => isDeepStrictEqual(c, answer))) return;
  const ids = Object.keys(candidates);
  const shown =
    typeof answer === 'string' ? JSON.stringify(answer.length > 120 ? `${answer.slice(0, 117)}...` : answer) : 'a non-text answer';
  throw new RuntimeError(
    'JudgeChoiceNotCandidate',
    `step '${stepId}' must answer with one of the candidates (${ids.join(', ')}) verbatim, but answered ${shown}; tell the judge to repeat one candidate exactly, without edits or commentary`,
    { details: { candidates: ids } },
  );
}
