import { z } from 'zod';
import { NAME_PATTERN } from '../chain/ChainTask.js';
import type { ChainDocumentSource } from './ChainDocumentSource.js';
import {
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

/** Options of the fan-out/gather shape: a number of branches, or their names (each becomes a perspective). */
export const FanOutGatherOptions = z.strictObject({
  ...CommonShapeOptions,
  branches: z.union([count(64), z.array(z.string().regex(NAME_PATTERN)).min(1).max(64)]).default(3),
});

/** Fan-out/gather: one source step fans out to parallel branches (optionally named perspectives), then a gather step joins them. */
export function fanOutGather(options: z.input<typeof FanOutGatherOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('fan-out', FanOutGatherOptions, options);
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const branches = typeof o.branches === 'number' ? numbered('branch', o.branches) : [...new Set(o.branches)];
  for (const reserved of ['source', 'gather']) {
    if (branches.includes(reserved)) branches[branches.indexOf(reserved)] = `${reserved}_branch`;
  }
  const named = typeof o.branches !== 'number';
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ['source', modelTask('State the question precisely and list what each branch should examine: ${input.task}', o.model)],
    ...branches.map((b, i) => [
      b,
      modelTask(
        named
          ? `Examine the question from the "${b}" perspective:\n\${steps.source.output}`
          : `Branch ${i + 1} of ${branches.length}: examine the question:\n\${steps.source.output}`,
        o.model,
      ),
    ]),
    [
      'gather',
      modelTask(
        `Gather the branches into one answer to "\${input.task}".\n${branches.map((b) => `${b}: \${steps.${b}.output}`).join('\n')}`,
        o.model,
      ),
    ],
  ]);
  return {
    name: o.name ?? 'fan-out',
    description: `Fan-out/gather: a source step, ${branches.length} parallel branches, a gather step.`,
    input: TASK_INPUT,
    chain: `source > ${parallel(branches.map((b) => tagged(b, tools)))} > gather`,
    tasks,
  };
}
