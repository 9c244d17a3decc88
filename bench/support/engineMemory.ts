// Peak memory with N inline Map iterations in flight, measured alone in a fresh process (spawned by
// engine.bench.ts) so earlier benchmarks' heap does not count. Prints one JSON line.
import { createLambdaInvoker, executeStateMachine, type AslDefinition } from '@stepforge/engine';

/** Starts 10,000 Map iterations that all block in a Task until every one has started; samples memory then. */
export async function mapMemory(
  items: number,
): Promise<{ heapMB: number; rssMB: number; baselineRssMB: number; inFlight: number; ms: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const baselineRssMB = process.memoryUsage().rss / 2 ** 20;
  let started = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let peak = { heapMB: 0, rssMB: 0 };
  let reached!: () => void;
  const allStarted = new Promise<void>((r) => (reached = r));
  const invoker = createLambdaInvoker({
    hold: async (event: unknown) => {
      if (++started === items) reached();
      await gate;
      return event;
    },
  });
  const definition: AslDefinition = {
    StartAt: 'M',
    States: {
      M: {
        Type: 'Map',
        ItemsPath: '$.items',
        MaxConcurrency: 0,
        ItemProcessor: {
          StartAt: 'Hold',
          States: { Hold: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:hold', End: true } },
        },
        ResultSelector: { 'count.$': 'States.ArrayLength($)' },
        End: true,
      },
    },
  };
  const t0 = Date.now();
  const done = executeStateMachine(
    definition,
    { items: Array.from({ length: items }, (_, i) => ({ id: i, payload: 'x'.repeat(32) })) },
    { invoker, collectEvents: false },
  );
  await allStarted;
  gc?.();
  const m = process.memoryUsage();
  peak = { heapMB: m.heapUsed / 2 ** 20, rssMB: m.rss / 2 ** 20 };
  release();
  const result = await done;
  if (result.status !== 'SUCCEEDED') throw new Error(`memory run ended ${result.status}: ${result.error} ${result.cause}`);
  return { ...peak, baselineRssMB, inFlight: started, ms: Date.now() - t0 };
}

const items = Number(process.argv[2] ?? 10_000);
console.log(JSON.stringify(await mapMemory(items)));
