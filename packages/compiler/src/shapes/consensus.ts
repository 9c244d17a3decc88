import { z } from 'zod';
import type { ChainDocumentSource } from './ChainDocumentSource.js';
import {
  checkPureReads,
  CommonShapeOptions,
  count,
  DEFAULT_TOOLS,
  modelTask,
  numbered,
  parallel,
  parseShapeOptions,
  tagged,
  TASK_INPUT,
} from './shapeOptions.js';

/**
 * The `majority` reduce: `$` is the parents' outputs keyed by handle, in parent order. Picks the most
 * frequent answer (compared by JSON text); on a tie the answer that appears first wins, because only a
 * strictly higher count replaces the running best.
 */
export const MAJORITY_JSONATA = [
  '(',
  '  $o := $;',
  '  $ks := $keys($o);',
  '  $strs := $map($ks, function($k) { $string($lookup($o, $k)) });',
  '  $best := $reduce($ks, function($acc, $k, $i) {(',
  '    $n := $count($filter($strs, function($s) { $s = $strs[$i] }));',
  '    $n > $acc.n ? {"k": $k, "n": $n} : $acc',
  '  )}, {"k": $ks[0], "n": 0});',
  '  $lookup($o, $best.k)',
  ')',
].join('\n');

/** Options of the consensus shape. */
export const ConsensusOptions = z.strictObject({
  ...CommonShapeOptions,
  voters: count(64).default(3),
  /** `judge`: a model selects one candidate verbatim. `majority`: a pure reduce picks the most frequent answer. */
  mode: z.enum(['judge', 'majority']).default('judge'),
});

/** Consensus: N voters answer independently; a judge selects one candidate verbatim, or a pure majority reduce picks one. */
export function consensus(options: z.input<typeof ConsensusOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('consensus', ConsensusOptions, options);
  if (o.mode === 'majority')
    checkPureReads(
      'consensus',
      'voters',
      o.voters,
      'tally',
      'for more voters use --mode judge, whose judge is a model step (up to 8 voters)',
    );
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const voters = numbered('voter', o.voters);
  const final = o.mode === 'judge' ? 'judge' : 'tally';
  const finalTask =
    o.mode === 'judge'
      ? modelTask(
          `Select the single best candidate answer to "\${input.task}" and return it verbatim, without any edits or commentary.\n${voters.map((v, i) => `Candidate ${i + 1}: \${steps.${v}.output}`).join('\n')}`,
          o.model,
          { select: 'verbatim' },
        )
      : ({ kind: 'pure', expr: MAJORITY_JSONATA } as const);
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ...voters.map((v) => [v, modelTask(`Answer independently and concisely: \${input.task}`, o.model)]),
    [final, finalTask],
  ]);
  return {
    name: o.name ?? `consensus-${o.mode}`,
    description: `Consensus (${o.mode}): ${o.voters} voters, then ${o.mode === 'judge' ? 'a judge that selects one candidate verbatim' : 'a majority vote (ties: first answer)'}.`,
    input: TASK_INPUT,
    chain: `${parallel(voters.map((v) => tagged(v, tools)))} > ${final}`,
    tasks,
  };
}
