// Workflows started by `.run()` in a user's program: the program's own workflow values, kept by id
// for the function handler of the same process. The handler calls the very functions (closures
// included) the program built, rather than importing the program again, which would run its top
// level, and with it the `.run()` call, a second time. A keyed run (stored in the project's stack)
// also records where the program built the workflow (`from`), so that another process retrying the
// run after the program exited can load the workflow again from there (reloadLiveWorkflow).

/** What a compiled workflow names as its module when its functions live in this process. */
export const LIVE_MODULE_PREFIX = 'stepforge-live:';

// On globalThis under a registered symbol: the program and the handler may load separate copies of
// this module (a bundle and dist/), and both must see one registry.
const KEY = Symbol.for('stepforge.liveWorkflows');

function registry(): Map<string, unknown> {
  const g = globalThis as { [KEY]?: Map<string, unknown> };
  return (g[KEY] ??= new Map());
}

/** What separates a live module's id from where the program built the workflow. */
const FROM = '?from=';

/**
 * Keeps a workflow value for the handler; returns the module name that finds it:
 * `stepforge-live:<id>`, or with `from` (the call site that built it, `file:///…/prog.mjs:12:20`)
 * `stepforge-live:<id>?from=<call site>`.
 */
export function registerLiveWorkflow(value: unknown, stableId?: string, from?: string): string {
  // A stable id (a keyed .run(): its run may be retried by a later run of the program) or a new one.
  const id = stableId ?? globalThis.crypto.randomUUID();
  registry().set(id, value);
  return `${LIVE_MODULE_PREFIX}${id}${from !== undefined && from !== '' ? `${FROM}${from}` : ''}`;
}

/** A live module name's parts: the id the registry keeps the workflow under, and where it was built. */
export function parseLiveModule(module: string): { id: string; from?: string } | undefined {
  if (!module.startsWith(LIVE_MODULE_PREFIX)) return undefined;
  const rest = module.slice(LIVE_MODULE_PREFIX.length);
  const at = rest.indexOf(FROM);
  return at < 0 ? { id: rest } : { id: rest.slice(0, at), from: rest.slice(at + FROM.length) };
}

/** The workflow value a live module name stands for, if this process holds it. */
export function liveWorkflow(module: string): unknown {
  const parsed = parseLiveModule(module);
  return parsed === undefined ? undefined : registry().get(parsed.id);
}

/** Keeps a workflow loaded again for a live module name (see registerLiveWorkflow). */
export function keepLiveWorkflow(module: string, value: unknown): void {
  const parsed = parseLiveModule(module);
  if (parsed !== undefined) registry().set(parsed.id, value);
}

/** Forgets a workflow whose run has settled. */
export function forgetLiveWorkflow(module: string): void {
  const parsed = parseLiveModule(module);
  if (parsed !== undefined) registry().delete(parsed.id);
}

/**
 * While a process loads a program again to find a workflow of it, the builders record each
 * workflow they make here (`built`) and mark it LIVE_RELOADED; `.run()` of a marked workflow calls
 * `ran` and never settles, so that the program stops where it would have started a run rather than
 * starting one, then and after the reload.
 */
export const LIVE_RELOAD = Symbol.for('stepforge.liveReload');

/** Marks a workflow built while a program was loaded again (see LIVE_RELOAD). */
export const LIVE_RELOADED = Symbol.for('stepforge.liveReloaded');

/** The state of a reload (on globalThis under LIVE_RELOAD while one is under way). */
export interface LiveReload {
  readonly built: unknown[];
  ran(value: unknown): void;
}
