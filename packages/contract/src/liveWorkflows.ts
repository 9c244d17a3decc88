// Workflows started by `.run()` in a user's program: the program's own workflow values, kept by id
// for the function handler of the same process. The handler calls the very functions (closures
// included) the program built, rather than importing the program again, which would run its top
// level, and with it the `.run()` call, a second time.

/** What a compiled workflow names as its module when its functions live in this process. */
export const LIVE_MODULE_PREFIX = 'stepforge-live:';

// On globalThis under a registered symbol: the program and the handler may load separate copies of
// this module (a bundle and dist/), and both must see one registry.
const KEY = Symbol.for('stepforge.liveWorkflows');

function registry(): Map<string, unknown> {
  const g = globalThis as { [KEY]?: Map<string, unknown> };
  return (g[KEY] ??= new Map());
}

/** Keeps a workflow value for the handler; returns the module name that finds it (`stepforge-live:<id>`). */
export function registerLiveWorkflow(value: unknown, stableId?: string): string {
  // A stable id (a keyed .run(): its run may be retried by a later run of the program) or a new one.
  const id = stableId ?? globalThis.crypto.randomUUID();
  registry().set(id, value);
  return `${LIVE_MODULE_PREFIX}${id}`;
}

/** The workflow value a live module name stands for, if this process holds it. */
export function liveWorkflow(module: string): unknown {
  return module.startsWith(LIVE_MODULE_PREFIX) ? registry().get(module.slice(LIVE_MODULE_PREFIX.length)) : undefined;
}

/** Forgets a workflow whose run has settled. */
export function forgetLiveWorkflow(module: string): void {
  if (module.startsWith(LIVE_MODULE_PREFIX)) registry().delete(module.slice(LIVE_MODULE_PREFIX.length));
}
