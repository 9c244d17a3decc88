// Execution view benchmark, measured in the browser (Debian's headless Chromium, driven by
// playwright-core): the run page drawing a 1,000-state machine (Parallels and Maps nested, laid out
// by dagre) and a 10,000-event history. The page is the built one (packages/cli/dist/web), served
// from loopback with a synthetic run answering its data routes. Targets: the graph drawn in under
// 1 s; no task blocking the page for long while the history loads, is filtered and scrolled
// ("without freezing": the page's longest stall is printed, measured as the largest gap between
// ticks of a 10 ms timer, beside the 50 ms a long task starts at).
// Never asserts. Skipped, saying so, without /usr/bin/chromium.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const WEB = fileURLToPath(new URL('../packages/cli/dist/web/', import.meta.url));

type State = Record<string, unknown>;

/** A machine of about `n` states: a sequence of segments of 12 (a Task, a Parallel of two three-Task branches, a Map of two states, a Choice), then Done and Failed. */
function machine(n: number): { StartAt: string; States: Record<string, State> } {
  const States: Record<string, State> = {};
  const segments = Math.ceil((n - 2) / 12);
  for (let i = 0; i < segments; i++) {
    const next = i + 1 < segments ? `task ${i + 1}` : undefined;
    const branch = (b: number) => ({
      StartAt: `p${i}.${b}.0`,
      States: Object.fromEntries(
        [0, 1, 2].map((k) => [
          `p${i}.${b}.${k}`,
          { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', ...(k < 2 ? { Next: `p${i}.${b}.${k + 1}` } : { End: true }) },
        ]),
      ),
    });
    States[`task ${i}`] = {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Next: `parallel ${i}`,
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }],
    };
    States[`parallel ${i}`] = { Type: 'Parallel', Branches: [branch(0), branch(1)], Next: `map ${i}` };
    States[`map ${i}`] = {
      Type: 'Map',
      ItemProcessor: {
        StartAt: `m${i}.a`,
        States: {
          [`m${i}.a`]: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Next: `m${i}.b` },
          [`m${i}.b`]: { Type: 'Pass', End: true },
        },
      },
      Next: `choice ${i}`,
    };
    States[`choice ${i}`] = { Type: 'Choice', Choices: [{ Condition: '{% true %}', Next: next ?? 'Done' }], Default: 'Done' };
  }
  States.Done = { Type: 'Succeed' };
  States.Failed = { Type: 'Fail', Error: 'Failed' };
  return { StartAt: 'task 0', States };
}

function countStates(states: Record<string, State>): number {
  let c = 0;
  for (const s of Object.values(states)) {
    c++;
    for (const b of (s.Branches as { States: Record<string, State> }[] | undefined) ?? []) c += countStates(b.States);
    const ip = s.ItemProcessor as { States: Record<string, State> } | undefined;
    if (ip) c += countStates(ip.States);
  }
  return c;
}

/** `n` history events: states entered and exited with Lambda calls between, in order. */
function history(n: number, names: readonly string[]): unknown[] {
  const out: unknown[] = [
    { id: 1, previousEventId: 0, type: 'ExecutionStarted', timestamp: 0, executionStartedEventDetails: { input: '{}' } },
  ];
  let i = 0;
  while (out.length < n) {
    const name = names[i++ % names.length]!;
    const id = out.length + 1;
    out.push({
      id,
      previousEventId: id - 1,
      type: 'TaskStateEntered',
      timestamp: id,
      stateEnteredEventDetails: { name, input: '{"x":1}' },
    });
    out.push({
      id: id + 1,
      previousEventId: id,
      type: 'LambdaFunctionScheduled',
      timestamp: id + 1,
      lambdaFunctionScheduledEventDetails: { resource: 'arn:aws:lambda:us-east-1:123456789012:function:F' },
    });
    out.push({
      id: id + 2,
      previousEventId: id + 1,
      type: 'LambdaFunctionSucceeded',
      timestamp: id + 2,
      lambdaFunctionSucceededEventDetails: { output: '{"ok":true}' },
    });
    out.push({
      id: id + 3,
      previousEventId: id + 2,
      type: 'TaskStateExited',
      timestamp: id + 3,
      stateExitedEventDetails: { name, output: '{"ok":true}' },
    });
  }
  return out.slice(0, n);
}

function allNames(states: Record<string, State>, into: string[] = []): string[] {
  for (const [k, s] of Object.entries(states)) {
    into.push(k);
    for (const b of (s.Branches as { States: Record<string, State> }[] | undefined) ?? []) allNames(b.States, into);
    const ip = s.ItemProcessor as { States: Record<string, State> } | undefined;
    if (ip) allNames(ip.States, into);
  }
  return into;
}

function runView(definition: unknown, events: unknown[]) {
  return {
    run: {
      runId: 'bench',
      workflow: 'bench',
      displayName: 'bench',
      status: 'RUNNING',
      startedAt: new Date(0).toISOString(),
      endedAt: null,
      idempotencyKey: null,
      parentRunId: null,
      input: {},
      output: null,
      error: null,
      executionArn: null,
    },
    definition,
    steps: [],
    progress: [],
    records: [],
    history: events,
    events: [],
    approvals: [],
    source: null,
  };
}

/** A loopback server of the built page and one synthetic run (its view, a quiet stream, sign-in). */
async function serveBench(body: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/' || path.startsWith('/assets/')) {
      const name = path === '/' ? 'index.html' : path.slice('/assets/'.length);
      const type = name.endsWith('.js') ? 'text/javascript' : name.endsWith('.css') ? 'text/css' : 'text/html';
      res.writeHead(200, { 'content-type': type }).end(readFileSync(join(WEB, name)));
    } else if (path === '/view/runs/bench') res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    else if (path === '/view/runs/bench/stream') res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': quiet\n\n');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"approvals":[]}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export default async function bench(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log('skipped: /usr/bin/chromium is absent (apt-get install -y chromium)');
    return;
  }
  if (!existsSync(join(WEB, 'app.js'))) {
    console.log('skipped: the page is not built (npm run build)');
    return;
  }
  const profile = mkdtempSync(join(tmpdir(), 'sf-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const rows: string[][] = [];
  try {
    for (const [states, events] of [
      [1_000, 200],
      [100, 10_000],
      [1_000, 10_000],
    ] as const) {
      const def = machine(states);
      const body = JSON.stringify(runView(def, history(events, allNames(def.States))));
      const served = await serveBench(body);
      const samples: { graph: number; total: number; loadTask: number; interactTask: number }[] = [];
      for (let round = 0; round < 3; round++) {
        // A page of its own per round: each load is a first load.
        const page = await context.newPage();
        page.on('pageerror', (e) => console.log('page error:', e.message));
        // Page code as text: functions handed over would carry tsx's helpers, which the page lacks.
        await page.addInitScript({
          content: `
          // The page's longest stall: the largest gap between ticks of a 10 ms timer, less the 10 ms.
          window.longTasks = [];
          let last = performance.now();
          setInterval(() => { const now = performance.now(); window.longTasks.push(now - last - 10); last = now; }, 10);
          sessionStorage.setItem('stepforge.apiToken', 'bench');`,
        });
        await page.goto(`${served.url}/#/runs/bench`);
        await page.waitForFunction("performance.getEntriesByName('sf:painted').length > 0", undefined, { timeout: 120_000 });
        const t = (await page.evaluate(`(() => {
          const at = (n) => performance.getEntriesByName(n)[0].startTime;
          const loadTask = Math.max(0, ...window.longTasks);
          window.longTasks.length = 0;
          return { graph: at('sf:graph-end') - at('sf:graph-start'), total: at('sf:painted') - at('sf:render-start'), loadTask };
        })()`)) as { graph: number; total: number; loadTask: number };
        // Using the history: filter by type and by text, then scroll through it.
        await page.selectOption('#history-type', 'LambdaFunctionSucceeded');
        await page.fill('#history-filter', 'p1');
        await page.fill('#history-filter', '');
        await page.selectOption('#history-type', '');
        for (let k = 1; k <= 10; k++)
          await page.evaluate(`document.querySelector('.vscroll').scrollTop = document.querySelector('.vscroll').scrollHeight * ${k / 10}`);
        await page.waitForTimeout(100);
        const interactTask = (await page.evaluate('Math.max(0, ...window.longTasks)')) as number;
        samples.push({ ...t, interactTask });
        await page.close();
      }
      await served.close();
      const med = (k: keyof (typeof samples)[number]) => samples.map((s) => s[k]).sort((a, b) => a - b)[1]!;
      rows.push([
        String(countStates(def.States)),
        String(events),
        `${med('graph').toFixed(0)} ms`,
        `${med('total').toFixed(0)} ms`,
        `${med('loadTask').toFixed(0)} ms`,
        `${med('interactTask').toFixed(0)} ms`,
      ]);
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log('Execution view in headless Chromium (median of 3 loads; target: graph drawn < 1000 ms; a stall over 50 ms is a long task)');
  const head = ['states', 'events', 'layout+draw', 'data→painted', 'longest stall (load)', 'longest stall (filter+scroll)'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padStart(widths[i]!)).join('  '));
}
