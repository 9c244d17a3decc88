import { afterAll, beforeAll } from 'vitest';
import type { Runtime } from '../src/runtime/Runtime.js';
import { makeRuntime, startDynalite, type DynamoEndpoint } from './emulators.js';
import { persistenceSuite } from './persistenceSuite.js';

let ddb: DynamoEndpoint;
let rt: Runtime;
beforeAll(async () => {
  ddb = await startDynalite();
  rt = await makeRuntime(ddb.endpoint);
});
afterAll(async () => {
  await ddb.stop();
});

persistenceSuite('dynalite', () => rt);
