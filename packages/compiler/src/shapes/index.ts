// Reusable shapes: helpers that emit ordinary chain documents (no new step kinds).
import type { ChainDocumentSource } from './ChainDocumentSource.js';
import { consensus } from './consensus.js';
import { fanOutGather } from './fanOutGather.js';
import { mapReduce } from './mapReduce.js';
import { reviewLoop } from './reviewLoop.js';
import { supervisor } from './supervisor.js';
import { swarm } from './swarm.js';

export * from './ChainDocumentSource.js';
export { swarm, SwarmOptions } from './swarm.js';
export { supervisor, SupervisorOptions } from './supervisor.js';
export { consensus, ConsensusOptions, MAJORITY_JSONATA } from './consensus.js';
export { reviewLoop, ReviewLoopOptions } from './reviewLoop.js';
export { mapReduce, MapReduceOptions, REDUCE_JSONATA } from './mapReduce.js';
export { fanOutGather, FanOutGatherOptions } from './fanOutGather.js';

/** One shape as `stepforge new` sees it: its name, what it builds, its count option and its builder. */
export interface ShapeInfo {
  readonly name: string;
  readonly summary: string;
  /** The option that sets the shape's size (`agents`, `workers`, …). */
  readonly countOption: string;
  build(options: Record<string, unknown>): ChainDocumentSource;
}

/** Every shape by its `stepforge new` name. */
export const SHAPES: readonly ShapeInfo[] = [
  { name: 'swarm', summary: 'N agents in parallel, then a gather step', countOption: 'agents', build: (o) => swarm(o) },
  {
    name: 'supervisor',
    summary: 'a planner, N workers in parallel, an integrating step',
    countOption: 'workers',
    build: (o) => supervisor(o),
  },
  {
    name: 'consensus',
    summary: 'N voters, then a judge (or --mode majority: a pure majority vote)',
    countOption: 'voters',
    build: (o) => consensus(o),
  },
  { name: 'review-loop', summary: 'a worker, then N review/revise rounds, unrolled', countOption: 'rounds', build: (o) => reviewLoop(o) },
  { name: 'map-reduce', summary: 'split, N mappers in parallel, reduce', countOption: 'mappers', build: (o) => mapReduce(o) },
  {
    name: 'fan-out',
    summary: 'a source, N (or named) branches in parallel, a gather step',
    countOption: 'branches',
    build: (o) => fanOutGather(o),
  },
];
