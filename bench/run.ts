// `npm run bench`: runs every bench/*.bench.ts in one process, one after another, each printing its
// own table with Stepforge's figures side by side with the peer's. Benchmarks measure; they never
// assert timings (targets are printed next to the figures instead).
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

// The SDK's notice that releases after January 2027 need Node 22 is noise in benchmark tables.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const dir = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const names = readdirSync(dir).filter((f) => f.endsWith('.bench.ts'));
// A bench's whole name picks that bench alone (`run` is not also `peer-run`); any other text, every bench whose name holds it.
const files = names
  .filter((f) => only.length === 0 || only.some((o) => f === `${o}.bench.ts` || (!names.includes(`${o}.bench.ts`) && f.includes(o))))
  .sort();
if (files.length === 0) console.log('no benchmarks found');
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default?: () => Promise<void> | void };
  if (typeof mod.default === 'function') await mod.default();
}
