// End-to-end run benchmark on the embedded stack: a 5-step chain (`s1@web-search > s2 > … > s5`;
// the tier policy wants one agentic step; model steps on the deterministic local provider, which
// calls no tools, so every step is one model call) started as `stepforge run` starts it and waited
// for, with every step going through the real handler (envelope validation, idempotency record,
// step records, conversation-free model call) and DynamoDB (dynalite, over HTTP on loopback, through
// the real SDK clients). Prints ms per step and runs per second next to the targets (≤ 5 ms/step,
// ≥ 50 runs/s).
// Rows: the warm stack (in memory, as `stepforge serve --in-memory` runs; measured once the process
// has run 200 runs, as a long-lived `serve` is and as benchmarks measure after warm-up: V8 has
// compiled the hot paths) is the row held to the targets; the fresh process (runs 6 to 145 of a new
// process, V8 still compiling in the background) is printed under it, since a short-lived CLI
// process lives there; the on-disk row is the CLI's
// default store (dynalite's LevelDB and the engine's execution files under `.stepforge/`); the peer
// row is the same runs with handlers that answer at once (no persistence): what the engine and
// the run bookkeeping cost on their own. Each row also counts the DynamoDB requests per step of its
// latency runs and splits off the main thread's CPU (Linux), since the dynalite worker and V8's
// background threads count in the process's.
// Under the table, the transport floor: a bare loopback HTTP round trip across two threads (see
// support/loopbackRoundTrip.ts), times the requests per step: the share of a step that is the
// host's and not the code's. Figures are printed, never asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { openStack, type EmbeddedStack } from '../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../packages/embedded/src/RunService.js';
import { FIVE_STEP_CHAIN as DOC, FIVE_STEPS as STEPS } from './support/fiveStepChain.js';
import { loopbackRoundTripMicros } from './support/loopbackRoundTrip.js';
import { mainThreadCpuMs } from './support/mainThreadCpuMs.js';

const TARGET_MS_PER_STEP = 5;
const TARGET_RUNS_PER_SECOND = 50;

interface Row {
  readonly label: string;
  readonly msPerStep: number;
  readonly cpuMsPerStep: number;
  readonly mainCpuMsPerStep: number | undefined;
  readonly runsPerSecond: number;
  readonly p50: number;
  readonly p95: number;
  readonly ddbPerStep: number;
}

/**
 * Counts the requests sent through the runtime's DynamoDB clients (the DocumentClient shares `client`'s
 * stack). Installed once per stack: a client with `cacheMiddleware` resolves its stack once, so a
 * counter added later would never see a request.
 */
const COUNTERS = new WeakMap<EmbeddedStack, { count: number }>();
function countDynamoRequests(stack: EmbeddedStack): { readonly count: number } {
  const known = COUNTERS.get(stack);
  if (known) return known;
  const counter = { count: 0 };
  COUNTERS.set(stack, counter);
  const clients = new Set([stack.runtime.db.client, stack.runtime.db.commands]);
  for (const c of clients) {
    c.middlewareStack.add(
      (next) => async (args) => {
        counter.count++;
        return next(args);
      },
      { step: 'initialize', name: 'benchRequestCounter' },
    );
  }
  return counter;
}

async function measure(
  label: string,
  stack: EmbeddedStack,
  dir: string,
  sequential: number,
  concurrent: number,
  inFlight: number,
  warmup = 5,
): Promise<Row> {
  const requests = countDynamoRequests(stack);
  const service = new EmbeddedRunService(stack, dir);
  const { entry } = await service.catalog.registerText(DOC, 'bench-five.chain.yaml');
  const once = async (i: number) => {
    const { run } = await service.start(entry, { topic: `t${i}` });
    const done = await service.wait(run.runId);
    if (done.status !== 'SUCCEEDED') throw new Error(`${label}: run ${run.runId} ${done.status}: ${done.error?.message}`);
  };
  for (let i = 0; i < warmup; i++) await once(-i - 1); // warm-up (JIT, first table writes)
  const times: number[] = [];
  const requests0 = requests.count;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  for (let i = 0; i < sequential; i++) {
    const t0 = performance.now();
    await once(i);
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuMs();
  const ddbPerStep = (requests.count - requests0) / sequential / STEPS;
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < concurrent) await once(1000 + next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    label,
    msPerStep: mean / STEPS,
    cpuMsPerStep: (cpu.user + cpu.system) / 1000 / sequential / STEPS,
    mainCpuMsPerStep: main0 !== undefined && main1 !== undefined ? (main1 - main0) / sequential / STEPS : undefined,
    runsPerSecond: concurrent / seconds,
    p50: times[Math.floor(times.length * 0.5)]!,
    p95: times[Math.floor(times.length * 0.95)]!,
    ddbPerStep,
  };
}

const quick = async (event: unknown) => ({
  done: true,
  output: `ok ${(event as { step: { id: string } }).step.id}`,
  usage: { inputTokens: 1, outputTokens: 1 },
});

export default async function runBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-bench-run-'));
  const rows: Row[] = [];
  const sequential = Number(process.env.BENCH_RUNS ?? 40);
  const concurrent = Number(process.env.BENCH_CONCURRENT_RUNS ?? 100);
  try {
    const full = await openStack({ projectDir: join(dir, 'full'), inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    try {
      // First, while the process is new (it must come first to be fresh).
      rows.push(await measure('fresh process (runs 6-145)', full, join(dir, 'full'), sequential, concurrent, 10));
      // The same stack once it has run 200 runs (a `serve` process, or CI's test run): V8 has
      // compiled the hot paths, which the fresh rows are still doing in the background. More
      // sequential runs than the fresh row, since nothing changes under them any more.
      rows.unshift(
        await measure(
          'warm stack, in memory (serve --in-memory)',
          full,
          join(dir, 'full'),
          2 * sequential,
          concurrent,
          10,
          Math.max(0, 200 - (5 + sequential + concurrent)),
        ),
      );
    } finally {
      await full.close();
    }
    const disk = await openStack({ projectDir: join(dir, 'disk'), env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    try {
      rows.push(await measure('same, on disk (.stepforge/, the CLI default)', disk, join(dir, 'disk'), sequential, concurrent, 10));
    } finally {
      await disk.close();
    }
    const bare = await openStack({
      projectDir: join(dir, 'bare'),
      inMemory: true,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
      handlers: { ModelStepFunction: quick },
    });
    try {
      rows.push(await measure('peer: same runs, handlers answer at once', bare, join(dir, 'bare'), sequential, concurrent, 10));
    } finally {
      await bare.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Measured last, on a quiet process, as the peer of a request's transport.
  const roundTrip = await loopbackRoundTripMicros();
  console.log(
    `5-step chain, deterministic local provider; ${sequential} sequential runs (latency; ${2 * sequential} on the warm stack), ${concurrent} runs 10 in flight (throughput)`,
  );
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} (wall times on a loaded machine mostly measure waiting for a core; CPU ms/step is the cost)`,
  );
  console.log(
    `cpu ms/step counts every thread of the process; main: the engine, the handlers and the SDK clients' thread alone (the rest is the dynalite worker and V8's background compiler and GC threads); ddb req/step: DynamoDB requests per step, run record writes included`,
  );
  console.log(
    `${'configuration'.padEnd(44)} ${'ms/step'.padStart(8)} ${'cpu ms/step'.padStart(12)} ${'main'.padStart(6)} ${'run p50'.padStart(9)} ${'run p95'.padStart(9)} ${'runs/s'.padStart(8)} ${'ddb req/step'.padStart(13)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.label.padEnd(44)} ${r.msPerStep.toFixed(2).padStart(8)} ${r.cpuMsPerStep.toFixed(2).padStart(12)} ${(r.mainCpuMsPerStep?.toFixed(2) ?? '-').padStart(6)} ${r.p50.toFixed(1).padStart(9)} ${r.p95.toFixed(1).padStart(9)} ${r.runsPerSecond.toFixed(1).padStart(8)} ${r.ddbPerStep.toFixed(2).padStart(13)}`,
    );
  }
  console.log(
    `${'target'.padEnd(44)} ${`≤${TARGET_MS_PER_STEP}`.padStart(8)} ${''.padStart(12)} ${''.padStart(6)} ${''.padStart(9)} ${''.padStart(9)} ${`≥${TARGET_RUNS_PER_SECOND}`.padStart(8)} ${''.padStart(13)}`,
  );
  const warm = rows[0]!;
  // What no change in Stepforge's code removes: the host's cost of the round trips themselves.
  console.log(
    `transport floor: a bare loopback HTTP round trip to another thread (undici → node:http answering at once; no SDK, signing or dynalite) takes ${roundTrip.toFixed(0)} µs here;` +
      ` at ${warm.ddbPerStep.toFixed(2)} DynamoDB requests a step that is ${((roundTrip * warm.ddbPerStep) / 1000).toFixed(2)} ms of the warm stack's ${warm.msPerStep.toFixed(2)} ms/step`,
  );
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `targets, warm stack: ${warm.msPerStep.toFixed(2)} ms/step ${verdict(warm.msPerStep <= TARGET_MS_PER_STEP)}, ${warm.runsPerSecond.toFixed(1)} runs/s ${verdict(warm.runsPerSecond >= TARGET_RUNS_PER_SECOND)}` +
      `; fresh process: ${verdict(rows[1]!.msPerStep <= TARGET_MS_PER_STEP)} / ${verdict(rows[1]!.runsPerSecond >= TARGET_RUNS_PER_SECOND)}`,
  );
}
