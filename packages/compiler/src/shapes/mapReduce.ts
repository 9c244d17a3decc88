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
 * Options of the map-reduce shape. The pure reduce carries every mapper's output through one state
 * (each up to the 32 KiB a state-read output is kept inline), so three mappers is what fits Step
 * Functions' 256 KiB payload in the worst case; more is refused as an invalid option (checkPureReads).
 */
export const MapReduceOptions = z.strictObject({ ...CommonShapeOptions, mappers: count(64).default(3) });

/**
 * The reduce: `$` is the mappers' outputs keyed by handle, in mapper order; the result is the list
 * of partial results in that order (a list even for one mapper). Plain JSONata, so the reduce is a
 * `pure` step: it runs in the state machine, with no model call that could drop or reword a part.
 */
export const REDUCE_JSONATA = ['(', '  $o := $;', '  [$map($keys($o), function($k) { $lookup($o, $k) })]', ')'].join('\n');

/** Map-reduce: a split step partitions the work, N mappers each process one partition in parallel, a pure reduce collects their results in order. */
export function mapReduce(options: z.input<typeof MapReduceOptions> = {}): ChainDocumentSource {
  const o = parseShapeOptions('map-reduce', MapReduceOptions, options);
  checkPureReads(
    'map-reduce',
    'mappers',
    o.mappers,
    'reduce',
    'for more parts use fan-out, whose gather is a model step (up to 8 branches)',
  );
  const tools = o.tools ?? [...DEFAULT_TOOLS];
  const mappers = numbered('map', o.mappers);
  const tasks: ChainDocumentSource['tasks'] = Object.fromEntries([
    ['split', modelTask(`Partition this work into exactly ${o.mappers} numbered, non-overlapping parts: \${input.task}`, o.model)],
    ...mappers.map((m, i) => [m, modelTask(`Process part ${i + 1} (only that part) of:\n\${steps.split.output}`, o.model)]),
    ['reduce', { kind: 'pure', expr: REDUCE_JSONATA } as const],
  ]);
  return {
    name: o.name ?? 'map-reduce',
    description: `Map-reduce: split, ${o.mappers} mappers in parallel, then a pure reduce that lists their results in order.`,
    input: TASK_INPUT,
    chain: `split > ${parallel(mappers.map((m) => tagged(m, tools)))} > reduce`,
    tasks,
  };
}
