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

/** Options of the swarm shape. */
export const SwarmOptions = z.strictObject({ ...CommonShapeOptions, agents: count(64).default(3) });

/** Swarm: N independent agents work on the same task in parallel, then one step gathers their answers. */
export function swarm(options: z.input<typeof SwarmOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('swarm', SwarmOptions, options);
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const agents = numbered('agent', o.agents);
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ...agents.map((a, i) => [
      a,
      modelTask(`You are agent ${i + 1} of ${o.agents} in a swarm. Work independently on: \${input.task}`, o.model),
    ]),
    [
      'gather',
      modelTask(
        `Gather the swarm's answers to "\${input.task}" into one answer.\n${agents.map((a) => `${a}: \${steps.${a}.output}`).join('\n')}`,
        o.model,
      ),
    ],
  ]);
  return {
    name: o.name ?? 'swarm',
    description: `Swarm: ${o.agents} agents in parallel, then a gather step.`,
    input: TASK_INPUT,
    chain: `${parallel(agents.map((a) => tagged(a, tools)))} > gather`,
    tasks,
  };
}
