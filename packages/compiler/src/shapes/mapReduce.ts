import { z } from 'zod';
import type { ChainDocumentSource } from './ChainDocumentSource.js';
import { CommonShapeOptions, count, DEFAULT_TOOLS, modelTask, numbered, parallel, parseShapeOptions, tagged, TASK_INPUT } from './shapeOptions.js';

/** Options of the map-reduce shape. */
export const MapReduceOptions = z.strictObject({ ...CommonShapeOptions, mappers: count(64).default(4) });

/** Map-reduce: a split step partitions the work, N mappers each process one partition in parallel, a reduce step combines. */
export function mapReduce(options: z.input<typeof MapReduceOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('map-reduce', MapReduceOptions, options);
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const mappers = numbered('map', o.mappers);
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ['split', modelTask(`Partition this work into exactly ${o.mappers} numbered, non-overlapping parts: \${input.task}`, o.model)],
    ...mappers.map((m, i) => [m, modelTask(`Process part ${i + 1} (only that part) of:\n\${steps.split.output}`, o.model)]),
    ['reduce', modelTask(`Combine the partial results into one result for "\${input.task}".\n${mappers.map((m) => `${m}: \${steps.${m}.output}`).join('\n')}`, o.model)],
  ]);
  return {
    name: o.name ?? 'map-reduce',
    description: `Map-reduce: split, ${o.mappers} mappers in parallel, reduce.`,
    input: TASK_INPUT,
    chain: `split > ${parallel(mappers.map((m) => tagged(m, tools)))} > reduce`,
    tasks,
  };
}
