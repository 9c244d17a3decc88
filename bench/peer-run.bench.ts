// Stepforge against LangGraph.js, side by side, on the workflows an agent developer would write in
// either: a 5-step chain, a 50-step chain and a 10-way fan-out / fan-in (a first step, ten parallel
// steps, a joining step: 12 steps). Every step is one model call to a model that answers at once
// (Stepforge: the deterministic local provider; LangGraph: an async function building the same
// prompt from the state and answering at once), so what is measured is each tool's own cost of
// running and recording a step. Both keep durable state where they can:
//
// - Stepforge, on disk (the CLI's default: dynalite's LevelDB and the engine's execution files under
//   `.stepforge/`; every step claimed or committed in DynamoDB before it returns), and in memory.
// - LangGraph.js with its SQLite checkpointer (`@langchain/langgraph-checkpoint-sqlite`, WAL, a
//   checkpoint written after every super-step) when it is installed and runs here, else MemorySaver
//   (the line above the table says which, and why); and with no checkpointer at all, its floor.
//
// Rounds are interleaved (each round runs every shape on every configuration, in turn), so that the
// host's load moves all of them alike; each cell is the median over the rounds of one batch's wall
// time ÷ (runs × steps), with 10 runs in flight. Figures are printed, never asserted; the target is
// Stepforge on disk ≤ LangGraph.js with its durable checkpointer, on each shape.
//
//   npm run bench -- peer-run           # ROUNDS=5, RUNS=30 (runs a batch) by default
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openStack, type EmbeddedStack } from '../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../packages/embedded/src/RunService.js';
import type { WorkflowEntry } from '../packages/embedded/src/RegisteredCatalog.js';

interface Shape {
  readonly name: string;
  readonly steps: number;
  /** The Stepforge chain document. */
  readonly doc: string;
  /** Node ids and edges, for the LangGraph graph (START and END added). */
  readonly nodes: readonly string[];
  readonly edges: readonly (readonly [string, string])[];
}

const prompt = (i: string) => `Step ${i} on \${input.topic}`;

function chainShape(n: number): Shape {
  const ids = Array.from({ length: n }, (_, i) => `s${i + 1}`);
  return {
    name: `${n}-step chain`,
    steps: n,
    // The tier policy wants one agentic step; the local provider calls no tools, so it is one model call.
    doc: `name: bench-chain-${n}\nchain: "${ids.map((id, i) => (i === 0 ? `${id}@web-search` : id)).join(' > ')}"\ninput:\n  topic: string\ntasks:\n${ids.map((id) => `  ${id}: { kind: model, prompt: "${prompt(id)}" }`).join('\n')}\n`,
    nodes: ids,
    edges: ids.slice(1).map((id, i) => [ids[i]!, id] as const),
  };
}

function fanShape(width: number): Shape {
  const workers = Array.from({ length: width }, (_, i) => `w${i + 1}`);
  const ids = ['split', ...workers, 'join'];
  return {
    name: `${width}-way fan-out / fan-in`,
    steps: ids.length,
    doc: `name: bench-fan-${width}\nchain: "split@web-search > [${workers.join(' & ')}] > join"\ninput:\n  topic: string\ntasks:\n${ids.map((id) => `  ${id}: { kind: model, prompt: "${prompt(id)}" }`).join('\n')}\n`,
    nodes: ids,
    edges: [...workers.map((w) => ['split', w] as const), ...workers.map((w) => [w, 'join'] as const)],
  };
}

const SHAPES: readonly Shape[] = [chainShape(5), chainShape(50), fanShape(10)];

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Runs `runs` runs, `inFlight` at a time; ms of wall per step. */
async function batch(runs: number, inFlight: number, steps: number, once: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < runs) await once(next++);
    }),
  );
  return (performance.now() - t0) / (runs * steps);
}

/** A configuration under test: how to run one run of a shape. */
interface Contender {
  readonly label: string;
  run(shape: Shape, i: number): Promise<void>;
  close(): Promise<void>;
}

async function stepforge(label: string, dir: string, inMemory: boolean): Promise<Contender> {
  const stack: EmbeddedStack = await openStack({
    projectDir: dir,
    ...(inMemory ? { inMemory: true } : {}),
    env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
  });
  const service = new EmbeddedRunService(stack, dir);
  const entries = new Map<string, WorkflowEntry>();
  for (const s of SHAPES)
    entries.set(s.name, (await service.catalog.registerText(s.doc, `${s.name.replace(/[^a-z0-9]+/g, '-')}.chain.yaml`)).entry);
  return {
    label,
    async run(shape, i) {
      const { run } = await service.start(entries.get(shape.name)!, { topic: `t${i}` });
      const done = await service.wait(run.runId);
      if (done.status !== 'SUCCEEDED') throw new Error(`${label}: ${shape.name} run ${run.runId} ${done.status}: ${done.error?.message}`);
    },
    close: () => stack.close(),
  };
}

/** The peer graph's state: the topic, and each node's output by node. */
interface PeerState {
  readonly topic: string;
  readonly outputs: Record<string, string>;
}

/** What the LangGraph.js packages give this bench, loaded only when installed. */
interface LangGraph {
  readonly version: string;
  build(shape: Shape, checkpointer: unknown): { invoke(input: unknown, config: unknown): Promise<unknown> };
  readonly MemorySaver: new () => unknown;
}

/**
 * The peers live in bench/peers, installed apart (`npm run bench:peers`): better-sqlite3 compiles
 * SQLite from source, which the project's own install (and CI) should not pay for.
 */
const PEERS = join(dirname(fileURLToPath(import.meta.url)), 'peers');
const peerRequire = createRequire(join(PEERS, 'package.json'));
const importPeer = (name: string): Promise<unknown> => import(pathToFileURL(peerRequire.resolve(name)).href);

async function loadLangGraph(): Promise<LangGraph | string> {
  try {
    const lg = (await importPeer('@langchain/langgraph')) as any;
    const version = (peerRequire('@langchain/langgraph/package.json') as { version: string }).version;
    const State = lg.Annotation.Root({
      topic: lg.Annotation(),
      outputs: lg.Annotation({ reducer: (a: Record<string, string>, b: Record<string, string>) => ({ ...a, ...b }), default: () => ({}) }),
    });
    // The peer of the local provider: the prompt built from the state, an answer at once.
    const model = async (text: string): Promise<string> => `ok ${text.length}`;
    return {
      version,
      MemorySaver: lg.MemorySaver as unknown as new () => unknown,
      build(shape, checkpointer) {
        const g = new lg.StateGraph(State) as unknown as {
          addNode(id: string, fn: (s: PeerState) => Promise<Partial<PeerState>>): unknown;
          addEdge(from: string, to: string): unknown;
          compile(o: object): { invoke(input: unknown, config: unknown): Promise<unknown> };
        };
        for (const id of shape.nodes) {
          g.addNode(id, async (s) => ({ outputs: { [id]: await model(`Step ${id} on ${s.topic}${Object.keys(s.outputs).length}`) } }));
        }
        const targets = new Set(shape.edges.map(([, to]) => to));
        const sources = new Set(shape.edges.map(([from]) => from));
        for (const id of shape.nodes) if (!targets.has(id)) g.addEdge(lg.START, id);
        for (const [from, to] of shape.edges) g.addEdge(from, to);
        for (const id of shape.nodes) if (!sources.has(id)) g.addEdge(id, lg.END);
        return g.compile(checkpointer === undefined ? {} : { checkpointer });
      },
    };
  } catch (e) {
    return `@langchain/langgraph is not installed here: run npm run bench:peers once (${(e as Error).message.split('\n')[0]})`;
  }
}

/** LangGraph's SQLite checkpointer on a file, if it loads and runs here; else why not. */
async function sqliteSaver(file: string): Promise<{ saver: unknown; close(): void } | string> {
  try {
    const { SqliteSaver } = (await importPeer('@langchain/langgraph-checkpoint-sqlite')) as any;
    const saver = SqliteSaver.fromConnString(file);
    return { saver, close: () => (saver as unknown as { db: { close(): void } }).db.close() };
  } catch (e) {
    return `@langchain/langgraph-checkpoint-sqlite does not load here (${(e as Error).message.split('\n')[0]})`;
  }
}

function langGraph(label: string, lg: LangGraph, checkpointer: unknown, close: () => void = () => undefined): Contender {
  const graphs = new Map(SHAPES.map((s) => [s.name, lg.build(s, checkpointer)]));
  let thread = 0;
  return {
    label,
    async run(shape, i) {
      const out = (await graphs
        .get(shape.name)!
        .invoke({ topic: `t${i}` }, { configurable: { thread_id: `run-${thread++}` }, recursionLimit: shape.steps + 10 })) as {
        outputs: Record<string, string>;
      };
      if (Object.keys(out.outputs).length !== shape.steps)
        throw new Error(`${label}: ${shape.name} ran ${Object.keys(out.outputs).length} of ${shape.steps} steps`);
    },
    async close() {
      close();
    },
  };
}

export default async function peerRunBench(): Promise<void> {
  const rounds = Number(process.env.ROUNDS ?? 5);
  const runs = Number(process.env.RUNS ?? 30);
  const inFlight = 10;
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-peer-'));
  const contenders: Contender[] = [];
  const notes: string[] = [];
  try {
    contenders.push(await stepforge('Stepforge, on disk (CLI default)', join(dir, 'disk'), false));
    contenders.push(await stepforge('Stepforge, in memory', join(dir, 'mem'), true));
    const lg = await loadLangGraph();
    if (typeof lg === 'string') {
      notes.push(`${lg}: no LangGraph.js rows (npm ci installs it as a dev dependency)`);
    } else {
      const sqlite = await sqliteSaver(join(dir, 'langgraph.sqlite'));
      if (typeof sqlite === 'string') {
        notes.push(`LangGraph.js ${lg.version}: ${sqlite}; its durable row uses MemorySaver instead (in memory, NOT durable)`);
        contenders.push(langGraph(`LangGraph.js ${lg.version} + MemorySaver (instead of SQLite)`, lg, new lg.MemorySaver()));
      } else {
        notes.push(
          `LangGraph.js ${lg.version}: durable row = SqliteSaver (@langchain/langgraph-checkpoint-sqlite on better-sqlite3, a file, WAL journal as it sets it), one checkpoint a super-step`,
        );
        contenders.push(langGraph(`LangGraph.js ${lg.version} + SQLite checkpointer`, lg, sqlite.saver, sqlite.close));
      }
      contenders.push(langGraph(`LangGraph.js ${lg.version} + MemorySaver`, lg, new lg.MemorySaver()));
      contenders.push(langGraph(`LangGraph.js ${lg.version}, no checkpointer`, lg, undefined));
    }
    // Warm-up: every contender runs every shape a few times (JIT, first writes), uncounted.
    for (const c of contenders) for (const s of SHAPES) await batch(inFlight, inFlight, s.steps, (i) => c.run(s, -1 - i));
    const samples = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      for (const s of SHAPES) {
        // Alternate the order each round, so no contender always runs right after the same one.
        const order = round % 2 === 0 ? contenders : [...contenders].reverse();
        for (const c of order) {
          const key = `${c.label}|${s.name}`;
          const ms = await batch(s.steps >= 50 ? Math.max(5, Math.round(runs / 3)) : runs, inFlight, s.steps, (i) =>
            c.run(s, round * 10_000 + i),
          );
          samples.set(key, [...(samples.get(key) ?? []), ms]);
        }
      }
    }
    console.log(
      `peer-run: ${rounds} interleaved rounds; a batch is ${runs} runs (${Math.max(5, Math.round(runs / 3))} of the 50-step chain), ${inFlight} in flight; the model answers at once; ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    for (const n of notes) console.log(n);
    console.log(`| configuration | ${SHAPES.map((s) => `${s.name} (ms/step)`).join(' | ')} |`);
    console.log(`|---|${SHAPES.map(() => '---').join('|')}|`);
    for (const c of contenders) {
      console.log(`| ${c.label} | ${SHAPES.map((s) => median(samples.get(`${c.label}|${s.name}`)!).toFixed(2)).join(' | ')} |`);
    }
    const durable = contenders.find((c) => c.label.includes('SQLite') || c.label.includes('instead of SQLite'));
    if (durable) {
      const ours = contenders[0]!;
      const verdicts = SHAPES.map((s) => {
        const a = median(samples.get(`${ours.label}|${s.name}`)!);
        const b = median(samples.get(`${durable.label}|${s.name}`)!);
        return `${s.name}: ${(a / b).toFixed(2)}× (${a <= b ? 'met' : 'NOT met'})`;
      });
      console.log(`target, Stepforge on disk ≤ ${durable.label}: ${verdicts.join('; ')}`);
    }
  } finally {
    for (const c of contenders) await c.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
