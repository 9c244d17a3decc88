// Regenerates the editor schemas from the loaders' zod schemas: schemas/workflow.schema.json (the
// workflow DSL) and schemas/chain.schema.json (chain documents).
//   npx tsx schemas/generate.ts          (writes the files)
//   npx tsx schemas/generate.ts --check  (exit 1 when a checked-in file is stale)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chainJsonSchemaText } from '../packages/compiler/src/chain/chainJsonSchema.js';
import { workflowJsonSchemaText } from '../packages/compiler/src/dsl/workflowJsonSchema.js';

const SCHEMAS: readonly [string, () => string][] = [
  ['workflow.schema.json', workflowJsonSchemaText],
  ['chain.schema.json', chainJsonSchemaText],
];

let stale = false;
for (const [name, text] of SCHEMAS) {
  const target = fileURLToPath(new URL(`./${name}`, import.meta.url));
  const want = text();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // A missing file is stale too.
    }
    if (current !== want) {
      console.error(`schemas/${name} is out of date: run npx tsx schemas/generate.ts`);
      stale = true;
    } else {
      console.log(`schemas/${name} is up to date`);
    }
  } else {
    writeFileSync(target, want);
    console.log(`wrote ${target}`);
  }
}
if (stale) process.exit(1);
