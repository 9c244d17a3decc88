// Engine benchmark: identical JSONPath definitions run side by side, in one process, on the
// embedded Stepforge interpreter and on aws-local-stepfunctions@3.0.0, printing the median µs per
// state transition for each and the ratio; then how the cost per transition grows with the
// history's length; then peak memory with 10,000 Map iterations in flight.
// Both sides record the full history (the peer always does) and both check the definition once,
// outside the timed call (the peer in its StateMachine constructor, ours in prepareStateMachine).
// Targets: ≥10× faster than the peer on every shape, ≤10 µs/transition on the Pass chain, a flat
// cost per transition up to the 25,000-event quota, <500 MB peak for 10,000 in-flight Map
// iterations. Figures are printed, never asserted.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { prepareStateMachine, type AslDefinition, type PreparedStateMachine } from '@stepforge/engine';

// aws-local-stepfunctions 3.0.0 calls Promise.withResolvers, which Node 20 lacks.
const P = Promise as unknown as { withResolvers?: () => unknown };
if (typeof P.withResolvers !== 'function') {
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

interface Shape {
  readonly name: string;
  readonly definition: AslDefinition;
  readonly input: unknown;
  /** State transitions one run makes (states entered), the same for both engines. */
  readonly transitions: number;
}

function passChain(n: number): Shape {
  const States: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) States[`S${i}`] = i === n - 1 ? { Type: 'Pass', End: true } : { Type: 'Pass', Next: `S${i + 1}` };
  return { name: `Pass chain (${n} states)`, definition: { StartAt: 'S0', States }, input: { value: 1, tags: ['a', 'b'] }, transitions: n };
}

function mapShape(items: number, concurrency: number): Shape {
  return {
    name: `Map ${items} items, MaxConcurrency ${concurrency}`,
    definition: {
      StartAt: 'M',
      States: {
        M: {
          Type: 'Map',
          ItemsPath: '$.items',
          MaxConcurrency: concurrency,
          ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
          End: true,
        },
      },
    },
    input: { items: Array.from({ length: items }, (_, i) => ({ i })) },
    transitions: 1 + items,
  };
}

function parallelShape(branches: number, depth: number): Shape {
  const Branches = Array.from({ length: branches }, (_, b) => {
    const States: Record<string, unknown> = {};
    for (let i = 0; i < depth; i++)
      States[`B${b}S${i}`] = i === depth - 1 ? { Type: 'Pass', End: true } : { Type: 'Pass', Next: `B${b}S${i + 1}` };
    return { StartAt: `B${b}S0`, States };
  });
  return {
    name: `Parallel ${branches} branches x ${depth} states`,
    definition: { StartAt: 'Par', States: { Par: { Type: 'Parallel', Branches, End: true } } },
    input: { x: 1 },
    transitions: 1 + branches * depth,
  };
}

function choiceLoop(iterations: number): Shape {
  return {
    name: `Choice loop (${iterations} iterations)`,
    definition: {
      StartAt: 'Init',
      States: {
        // Counts from 1: aws-local-stepfunctions 3.0.0 evaluates States.MathAdd(0, 1) to {} (a falsy-zero bug).
        Init: { Type: 'Pass', Result: 1, ResultPath: '$.count', Next: 'Check' },
        Check: { Type: 'Choice', Choices: [{ Variable: '$.count', NumericLessThanEquals: iterations, Next: 'Inc' }], Default: 'Done' },
        Inc: { Type: 'Pass', Parameters: { 'count.$': 'States.MathAdd($.count, 1)' }, Next: 'Check' },
        Done: { Type: 'Succeed' },
      },
    },
    input: {},
    // Init + (Check + Inc) per iteration + the final Check + Done.
    transitions: 1 + 2 * iterations + 2,
  };
}

type Runner = (shape: Shape) => Promise<unknown>;

const prepared = new Map<Shape, PreparedStateMachine>();

/** Ours, with history kept (the default) and the definition checked once per shape, before timing. */
const ours: Runner = (s) => {
  let sm = prepared.get(s);
  if (!sm) prepared.set(s, (sm = prepareStateMachine(s.definition)));
  return sm.execute(s.input);
};

/**
 * The peer lives in bench/peers, installed apart (`npm run bench:peers`): it declares Node ≥22 in its
 * `engines` (it runs on Node 20 with the polyfill above), and the project's own install admits only
 * packages whose `engines` admit Node 20.
 */
const PEER_DIR = join(dirname(fileURLToPath(import.meta.url)), 'peers', 'node_modules', 'aws-local-stepfunctions');

/** The peer's Node ESM build, the one a plain `import` of the package resolves to. */
async function importPeer(): Promise<unknown> {
  const pkg = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')) as { exports: { import: string } };
  return import(pathToFileURL(join(PEER_DIR, pkg.exports.import)).href);
}

async function peerRunner(): Promise<Runner | undefined> {
  try {
    const mod = (await importPeer()) as {
      StateMachine: new (d: unknown, o?: unknown) => { run(input: unknown): { result: Promise<unknown> } };
    };
    const cache = new Map<Shape, { run(input: unknown): { result: Promise<unknown> } }>();
    return (s) => {
      let sm = cache.get(s);
      if (!sm) cache.set(s, (sm = new mod.StateMachine(s.definition)));
      return sm.run(s.input).result;
    };
  } catch (e) {
    const why = existsSync(PEER_DIR) ? 'could not be loaded' : 'is not installed here: run npm run bench:peers once';
    console.log(`aws-local-stepfunctions ${why} (${(e as Error).message.split('\n')[0]}); no peer column, stepforge only`);
    return undefined;
  }
}

/** Runs the shape for about `budgetMs` and returns µs per transition. */
async function timeRuns(run: Runner, shape: Shape, budgetMs: number): Promise<number> {
  let runs = 0;
  const start = process.hrtime.bigint();
  let elapsedMs = 0;
  while (elapsedMs < budgetMs || runs < 2) {
    await run(shape);
    runs++;
    elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (elapsedMs * 1000) / (runs * shape.transitions);
}

const median = (xs: number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

/**
 * Interleaves the two engines over several rounds (after a warm-up, which also checks the
 * definitions on both sides) and reports each engine's median round.
 */
async function measurePair(a: Runner, b: Runner | undefined, shape: Shape, budgetMs: number): Promise<{ ours: number; peer?: number }> {
  const rounds = 7;
  await timeRuns(a, shape, budgetMs / 4);
  if (b) await timeRuns(b, shape, budgetMs / 4);
  const ourRounds: number[] = [];
  const peerRounds: number[] = [];
  for (let r = 0; r < rounds; r++) {
    ourRounds.push(await timeRuns(a, shape, budgetMs / rounds));
    if (b) peerRounds.push(await timeRuns(b, shape, budgetMs / rounds));
  }
  return b ? { ours: median(ourRounds), peer: median(peerRounds) } : { ours: median(ourRounds) };
}

const fmt = (n: number, d = 2) => n.toFixed(d);

/** `npm run bench engine`: prints the table. */
export default async function engineBench(): Promise<void> {
  const quick = process.env.STEPFORGE_BENCH_QUICK === '1';
  const budget = quick ? 200 : 2000;
  const shapes = [passChain(200), passChain(5000), mapShape(1000, 10), parallelShape(8, 20), choiceLoop(1000)];
  const peer = await peerRunner();
  console.log(
    'Engine: µs per state transition (lower is better; median of 7 interleaved rounds), identical JSONPath definitions, same process, history kept on both sides, definitions checked before timing',
  );
  console.log(
    peer
      ? `${'shape'.padEnd(38)} ${'stepforge'.padStart(10)} ${'aws-local-sfn'.padStart(14)} ${'speed-up'.padStart(9)}  target`
      : `${'shape'.padEnd(38)} ${'stepforge'.padStart(10)}  target`,
  );
  for (const s of shapes) {
    // Correctness first: both engines must produce the same output for the same definition.
    const ourOut = await ours(s);
    const ourResult = ourOut as { status: string; output: unknown };
    if (ourResult.status !== 'SUCCEEDED') throw new Error(`${s.name}: stepforge ended ${ourResult.status}`);
    if (peer) {
      const peerOut = await peer(s);
      if (JSON.stringify(peerOut) !== JSON.stringify(ourResult.output)) console.log(`  ! ${s.name}: outputs differ between the engines`);
    }
    const m = await measurePair(ours, peer, s, budget);
    const a = { usPerTransition: m.ours };
    const b = m.peer !== undefined ? { usPerTransition: m.peer } : undefined;
    const ratio = b ? b.usPerTransition / a.usPerTransition : NaN;
    const target = s.name.startsWith('Pass chain') ? '≥10x and ≤10 µs' : '≥10x';
    const ok = ratio >= 10 && (!s.name.startsWith('Pass chain') || a.usPerTransition <= 10);
    console.log(
      b
        ? `${s.name.padEnd(38)} ${fmt(a.usPerTransition).padStart(10)} ${fmt(b.usPerTransition).padStart(14)} ${`${fmt(ratio, 1)}x`.padStart(9)}  ${target} ${ok ? 'met' : 'MISSED'}`
        : `${s.name.padEnd(38)} ${fmt(a.usPerTransition).padStart(10)}  ${target} (the peer's half not measured)`,
    );
  }
  // The cost per transition should not grow with the history: Pass chains from about 1,000 to 24,000 events.
  const growth: string[] = [];
  for (const n of [500, 2500, 5000, 12000]) {
    const s = passChain(n);
    await timeRuns(ours, s, budget / 8);
    const rounds: number[] = [];
    for (let r = 0; r < 5; r++) rounds.push(await timeRuns(ours, s, budget / 5));
    growth.push(`${2 * n + 2} events ${fmt(median(rounds))} µs`);
  }
  console.log(`Pass chain, stepforge µs per transition by history length (median of 5): ${growth.join(', ')}; target: flat`);
  // Measured in a fresh process: in this one, the benchmarks before it have already grown the heap and RSS.
  const mem = JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./support/engineMemory.ts', import.meta.url)), '10000'],
      { encoding: 'utf8' },
    ),
  ) as { heapMB: number; rssMB: number; baselineRssMB: number; inFlight: number; ms: number };
  console.log(
    `Map with ${mem.inFlight} iterations in flight: heap ${fmt(mem.heapMB, 0)} MB, rss ${fmt(mem.rssMB, 0)} MB (rss before ${fmt(mem.baselineRssMB, 0)} MB, fresh process), ` +
      `whole run ${mem.ms} ms; target < 500 MB ${mem.rssMB < 500 ? 'met' : 'MISSED'}${(globalThis as { gc?: unknown }).gc ? '' : ' (run with --expose-gc for exact figures)'}`,
  );
}
