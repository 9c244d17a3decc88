import { z } from 'zod';
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

/** Options of the supervisor shape. */
export const SupervisorOptions = z.strictObject({ ...CommonShapeOptions, workers: count(64).default(3) });

/** Supervisor: a planner splits the task, workers each take a part in parallel, an integrating step assembles the result. */
export function supervisor(options: z.input<typeof SupervisorOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('supervisor', SupervisorOptions, options);
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const workers = numbered('worker', o.workers);
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ['planner', modelTask(`Split this task into ${o.workers} independent parts, numbered 1 to ${o.workers}: \${input.task}`, o.model)],
    ...workers.map((w, i) => [w, modelTask(`Do part ${i + 1} of this plan and nothing else:\n\${steps.planner.output}`, o.model)]),
    [
      'integrate',
      modelTask(
        `Integrate the workers' results into one answer to "\${input.task}".\n${workers.map((w) => `${w}: \${steps.${w}.output}`).join('\n')}`,
        o.model,
      ),
    ],
  ]);
  return {
    name: o.name ?? 'supervisor',
    description: `Supervisor: a planner, ${o.workers} workers in parallel, then an integrating step.`,
    input: TASK_INPUT,
    chain: `planner > ${parallel(workers.map((w) => tagged(w, tools)))} > integrate`,
    tasks,
  };
}
