// Regenerates schemas/workflow.schema.json from the DSL's zod schema:
//   npx tsx schemas/generate.ts          (writes the file)
//   npx tsx schemas/generate.ts --check  (exit 1 when the checked-in file is stale)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { workflowJsonSchemaText } from '../packages/compiler/src/dsl/workflowJsonSchema.js';

const target = fileURLToPath(new URL('./workflow.schema.json', import.meta.url));
const text = workflowJsonSchemaText();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // A missing file is stale too.
  }
  if (current !== text) {
    console.error('schemas/workflow.schema.json is out of date: run npx tsx schemas/generate.ts');
    process.exit(1);
  }
  console.log('schemas/workflow.schema.json is up to date');
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
