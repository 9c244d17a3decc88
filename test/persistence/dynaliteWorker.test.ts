// The persistence suite on dynalite as the embedded stack runs it: in its worker thread, with the
// expression parse cache installed (packages/embedded/src/dynaliteExpressionCache.cjs). The
// conditional claims, lease updates and takeovers must decide exactly as on plain dynalite.
import { afterAll, beforeAll } from 'vitest';
import { startDynaliteWorker, type DynaliteWorker } from '../../packages/embedded/src/startDynaliteWorker.js';
import type { Runtime } from '../../packages/runtime/src/runtime/Runtime.js';
import { makeRuntime } from '../../packages/runtime/test/emulators.js';
import { persistenceSuite } from '../../packages/runtime/test/persistenceSuite.js';

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
