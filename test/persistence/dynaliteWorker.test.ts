// The persistence suite on dynalite as the embedded stack runs it: in its worker thread, with the
// expression parse cache installed (packages/cli/src/stack/dynaliteExpressionCache.cjs). The
// conditional claims, lease updates and takeovers must decide exactly as on plain dynalite.
import { afterAll, beforeAll } from 'vitest';
import { startDynaliteWorker, type DynaliteWorker } from '../../packages/cli/src/stack/startDynaliteWorker.js';
import type { Runtime } from '../../functions/src/runtime/Runtime.js';
import { makeRuntime } from '../../functions/test/emulators.js';
import { persistenceSuite } from '../../functions/test/persistenceSuite.js';

let ddb: DynaliteWorker;
let rt: Runtime;
beforeAll(async () => {
  ddb = await startDynaliteWorker('127.0.0.1', { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  rt = await makeRuntime(ddb.endpoint);
});
afterAll(async () => {
  await rt?.close();
  await ddb?.close();
});

persistenceSuite('dynalite worker, expression cache', () => rt);
