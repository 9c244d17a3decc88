import { LIVE_RELOAD, keepLiveWorkflow, liveWorkflow, parseLiveModule, type LiveReload } from '@stepforge/contract';
import { pathToFileURL } from 'node:url';
import { importFile } from './importFile.js';

/** Where a builder records the place that built a workflow (the compiler's CODE_CALL_SITE). */
const CALL_SITE = Symbol.for('stepforge.codeCallSite');

/** How long a program loaded again may take to build the workflow. */
export const RELOAD_WAIT_MS = 30_000;

// One reload at a time in a process: the builders record into the one LIVE_RELOAD state.
let queue: Promise<unknown> = Promise.resolve();
const loading = new Map<string, Promise<unknown>>();

/**
 * The workflow of a live module name (`stepforge-live:<id>?from=<call site>`) that this process does
 * not hold: a `.run()` with an idempotency key in a program that has exited since, whose run is
 * being retried or resumed here. Imports the file the call site names again (a fresh evaluation),
 * with the builders recording what they build and `.run()` of it never settling, so that the
 * program's top level stops where it started its run; takes the workflow built at the recorded
 * call site (or else on its line: a loader may move the column), and keeps it for the rest of this
 * process. Resolves undefined for a name without a call site. Rejects with an Error saying why
 * when the file cannot be imported or built no such workflow within RELOAD_WAIT_MS.
 *
 * The program's code before its `.run()` runs again in this process: its top level should only
 * build workflows and call `.run()`.
 */
export async function reloadLiveWorkflow(module: string): Promise<unknown> {
  const parsed = parseLiveModule(module);
  if (parsed?.from === undefined) return undefined;
  const held = liveWorkflow(module);
  if (held !== undefined) return held;
  let p = loading.get(parsed.id);
  if (p === undefined) {
    const from = parsed.from;
    p = queue.then(() => load(from));
    queue = p.catch(() => undefined);
    loading.set(parsed.id, p);
    p.then(
      (value) => keepLiveWorkflow(module, value),
      () => undefined,
    ).finally(() => loading.delete(parsed.id));
  }
  return p;
}

async function load(from: string): Promise<unknown> {
  const m = /^(.+):(\d+):(\d+)$/.exec(from);
  if (m === null) throw new Error(`'${from}' names no place in a file`);
  const [, file, line] = m as unknown as [string, string, string];
  const url = file.startsWith('file:') ? file : pathToFileURL(file).href;
  // The call site as the first run saw it: without the query that made this import a fresh one.
  const siteOf = (v: unknown) => String((v as Record<symbol, unknown>)[CALL_SITE] ?? '').replace(/\?stepforge-reload=\d+(?=:\d+:\d+$)/, '');
  let wake = () => {};
  let ran = false;
  const state: LiveReload = {
    built: [],
    ran: () => {
      ran = true;
      wake();
    },
  };
  const found = () =>
    state.built.find((v) => siteOf(v) === from) ?? state.built.find((v) => siteOf(v).replace(/:\d+$/, '') === `${file}:${line}`);
  const g = globalThis as { [LIVE_RELOAD]?: LiveReload };
  g[LIVE_RELOAD] = state;
  let timer: NodeJS.Timeout | undefined;
  try {
    let settled = false;
    let failure: unknown;
    // A query Node has not cached: the file is evaluated again, not answered from a cache.
    const imported = importFile(`${url}?stepforge-reload=${Date.now()}`).then(
      () => {
        settled = true;
      },
      (e: unknown) => {
        settled = true;
        failure = e;
      },
    );
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RELOAD_WAIT_MS);
    });
    let expired = false;
    void timedOut.then(() => {
      expired = true;
    });
    // Until the workflow is built: each `.run()` the program reaches, or its end, is a moment to look.
    // A program that reached a `.run()` waits there for good (its run never settles), so what it
    // has not built by then (and by the next turn, for runs it did not await) it never builds.
    for (;;) {
      const hit = found();
      if (hit !== undefined) return hit;
      if (settled || expired || ran) break;
      await Promise.race([
        imported,
        timedOut,
        new Promise<void>((resolve) => {
          wake = resolve;
        }),
      ]);
    }
    if (ran && !settled) await new Promise<void>((resolve) => setImmediate(resolve));
    const late = found();
    if (late !== undefined) return late;
    if (failure !== undefined) throw new Error(`importing ${file} failed: ${(failure as Error).message ?? String(failure)}`);
    throw new Error(
      settled || ran
        ? `${file} built no workflow at line ${line} when imported again (was the program changed since the run started?)`
        : `${file} did not build the workflow within ${RELOAD_WAIT_MS / 1000} s of being imported again`,
    );
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (g[LIVE_RELOAD] === state) delete g[LIVE_RELOAD];
  }
}
