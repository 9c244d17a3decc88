// Imported first by main.ts, before any module that builds a zod schema: zod reads this setting
// as each object schema is built. zod keeps its settings on `globalThis.__zod_globalConfig`
// (shared by every copy of zod in a process, and taken as it is when there already is one), so
// the setting is made there without loading zod: `--help` loads no zod at all.
//
// Why: zod compiles a parser of its own for each object schema the first time it parses with it
// (generated source, `new Function`), which V8's code cache for the CLI cannot hold: a fresh
// `run` of the quickstart compiled some twenty of them, 3-11 ms of its start-up on the 2-core
// build machine, and `validate` its document's. Measured on the step envelope, its parses after
// that are no faster than zod's own (35-50 µs either way), so a CLI process, which parses each
// schema a few times, is better off without them.
const shared = globalThis as { __zod_globalConfig?: { jitless?: boolean } };
(shared.__zod_globalConfig ??= {}).jitless = true;

export {};
