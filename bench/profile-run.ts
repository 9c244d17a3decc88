// Where a step's time goes on the embedded stack: the run benchmark's 5-step chain, warmed up, then
// timed piece by piece. Not a benchmark (nothing is compared and the instrumentation costs a little);
// a tool for whoever works on the run-speed figures.
//
//   node --import tsx bench/profile-run.ts [--disk] [--warm N] [--runs N]
//   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile-run.ts   # also V8 CPU profiles,
//     one per thread (the main thread and the dynalite worker); the window to read is printed
//
// It prints, per DynamoDB request, the wall time in each step of the SDK's middleware stack and in
// the request handler (transport and dynalite), and per step the gaps the handler and the engine
// account for.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStack } from '../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../packages/embedded/src/RunService.js';
import { FIVE_STEP_CHAIN as DOC, FIVE_STEPS as STEPS } from './support/fiveStepChain.js';

const { values: args } = parseArgs({
  options: { disk: { type: 'boolean' }, warm: { type: 'string', default: '250' }, runs: { type: 'string', default: '150' } },
});

const dir = mkdtempSync(join(tmpdir(), 'sf-profile-run-'));
let timing = false;
const spans = new Map<string, number>();
const add = (k: string, ms: number) => {
  if (timing) spans.set(k, (spans.get(k) ?? 0) + ms);
};
let requests = 0;

// Marks at the edges of the SDK's middleware steps and around the named middlewares of interest.
let marks: [string, number][] = [];
const mark = (label: string) => marks.push([label, performance.now()]);
type Mw = (next: (a: unknown) => Promise<unknown>) => (a: unknown) => Promise<unknown>;
const marker =
  (label: string): Mw =>
  (next) =>
  async (a) => {
    mark(label);
    const r = await next(a);
    mark(`${label} (back)`);
    return r;
  };

// Handler entry/exit, for the gaps between a step's requests and between steps.
let handlerIn = 0;
let lastOut = 0;
let firstRequestAt = 0;
let lastResponseAt = 0;
const stack = await openStack({
  projectDir: dir,
  inMemory: !args.disk,
  env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
  wrapHandlers: (hs) => {
    const model = hs['ModelStepFunction']!;
    return {
      ...hs,
      ModelStepFunction: async (event, context) => {
        handlerIn = performance.now();
        const first = (event as { step?: { id?: string } }).step?.id?.startsWith('s1') ?? false;
        if (lastOut)
          add(
            first ? "between runs: last handler return → next run's first handler" : 'engine: handler return → next handler entry',
            handlerIn - lastOut,
          );
        firstRequestAt = 0;
        const r = await model(event, context);
        lastOut = performance.now();
        if (firstRequestAt) add('handler: entry → first request (SDK before send included)', firstRequestAt - handlerIn);
        add('handler: last response → return', lastOut - lastResponseAt);
        return r;
      },
    };
  },
});
const client = stack.runtime.db.commands;
const ms = client.middlewareStack as unknown as {
  add(m: Mw, o: object): void;
  addRelativeTo(m: Mw, o: object): void;
};
for (const step of ['serialize', 'build', 'finalizeRequest'] as const) {
  ms.add(marker(`${step} step`), { step, priority: 'high', name: `profile_${step}_high` });
}
for (const name of [
  'httpAuthSchemeMiddleware',
  'endpointV2Middleware',
  'serializerMiddleware',
  'retryMiddleware',
  'httpSigningMiddleware',
  'deserializerMiddleware',
]) {
  ms.addRelativeTo(marker(`before ${name}`), { relation: 'before', toMiddleware: name, name: `profile_before_${name}` });
}
const handler = client.config.requestHandler as unknown as {
  handle(...a: unknown[]): Promise<unknown>;
  call?(...a: unknown[]): Promise<unknown>;
};
// The SDK's transport, and (the owner's item operations, sent as plain JSON) the port's call.
for (const method of ['handle', 'call'] as const) {
  const original = handler[method]?.bind(handler);
  if (!original) continue;
  handler[method] = async (...a: unknown[]) => {
    mark(method === 'handle' ? 'request handler (transport + dynalite)' : 'port call (transport + dynalite)');
    if (!firstRequestAt) firstRequestAt = performance.now();
    const r = await original(...a);
    mark(method === 'handle' ? 'after the request handler' : 'after the port call');
    lastResponseAt = performance.now();
    return r;
  };
}
const send = client.send.bind(client) as (...a: unknown[]) => Promise<unknown>;
(client as unknown as { send: typeof send }).send = async (...a: unknown[]) => {
  marks = [];
  mark('send');
  const r = await send(...a);
  mark('send resolved');
  if (timing) {
    requests++;
    // The time from each mark to the next.
    for (let i = 0; i < marks.length - 1; i++) add(`sdk request: ${marks[i]![0]} → ${marks[i + 1]![0]}`, marks[i + 1]![1] - marks[i]![1]);
  }
  return r;
};

const service = new EmbeddedRunService(stack, dir);
const { entry } = await service.catalog.registerText(DOC, 'bench-five.chain.yaml');
const once = async (topic: string) => {
  const { run } = await service.start(entry, { topic });
  const done = await service.wait(run.runId);
  if (done.status !== 'SUCCEEDED') throw new Error(`run ${run.runId} ${done.status}`);
};
for (let i = 0; i < Number(args.warm); i++) await once(`w${i}`);
const runs = Number(args.runs);
timing = true;
lastOut = 0;
const t0 = performance.now();
const window0 = process.hrtime.bigint() / 1000n;
for (let i = 0; i < runs; i++) await once(`t${i}`);
const wall = performance.now() - t0;
const window1 = process.hrtime.bigint() / 1000n;
await stack.close();
rmSync(dir, { recursive: true, force: true });

console.log(
  `${args.disk ? 'on disk' : 'in memory'}; ${args.warm} warm-up runs, then ${runs} timed: ${(wall / runs / STEPS).toFixed(2)} ms/step, ${(requests / runs / STEPS).toFixed(2)} DynamoDB requests/step (runtime client)`,
);
console.log(`CPU profile window (µs, as in --cpu-prof files): ${window0}–${window1}`);
console.log('\nper DynamoDB request, µs (wall, from one mark to the next; segments under 2 µs left out):');
for (const [k, v] of spans)
  if (k.startsWith('sdk request: ') && (v / requests) * 1000 >= 2)
    console.log(`  ${((v / requests) * 1000).toFixed(0).padStart(6)}  ${k.slice(13)}`);
console.log('\nper step, ms:');
for (const [k, v] of spans)
  if (!k.startsWith('sdk request: '))
    console.log(
      `  ${(v / (k.startsWith('between runs') ? runs : k.startsWith('engine') ? runs * (STEPS - 1) : runs * STEPS)).toFixed(3).padStart(7)}  ${k}${k.startsWith('between runs') ? ' (per run)' : ''}`,
    );
