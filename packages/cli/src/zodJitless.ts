// Imported first by main.ts, before any module that builds a zod schema: zod reads this setting
// as each object schema is built.
//
// Why: zod compiles a parser of its own for each object schema the first time it parses with it
// (generated source, `new Function`), which V8's code cache for the CLI cannot hold: a fresh
// `run` of the quickstart compiled some twenty of them, 3-10 ms of its start-up on the 2-core
// build machine, and `validate` its document's. Measured on the step envelope, its parses after
// that are no faster than zod's own (35-50 µs either way), so a CLI process, which parses each
// schema a few times, is better off without them.
import * as z from 'zod';

z.config({ jitless: true });
