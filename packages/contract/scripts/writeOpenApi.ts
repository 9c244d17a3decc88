// Writes docs/openapi.json from the document `serve` answers at /openapi.json (openApiDocument()), so
// the two never drift: run it after changing packages/contract/src/openApiDocument.ts or an API body
// schema (`npx tsx packages/contract/scripts/writeOpenApi.ts`); test/e2e/serve.test.ts compares them.
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../src/openApiDocument.js';

writeFileSync(new URL('../../../docs/openapi.json', import.meta.url), JSON.stringify(openApiDocument(), null, 2) + '\n');
