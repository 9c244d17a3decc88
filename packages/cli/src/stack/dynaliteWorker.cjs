// The dynalite worker thread (see startDynaliteWorker.ts). Plain CommonJS so the thread runs this
// file as it is, from src (tsx, vitest), from dist (tsc copies it) and beside the CLI bundle.
//
// It loads dynalite as soon as it starts, and listens only once asked to (`{ listen: { host,
// options } }`): so the CLI's launcher can start it before the CLI itself has loaded (bin/loadCli.js),
// letting the ~200 files of dynalite load on the other core meanwhile, and nothing is opened (the
// on-disk store, a port) until the stack decides to own it. An unused worker does nothing and
// holds nothing.
'use strict';

const { createRequire } = require('node:module');
const { parentPort, workerData } = require('node:worker_threads');

// The parse cache goes on dynalite's expression parsers before dynalite loads them.
if (workerData.expressionCache) require(workerData.expressionCache).installExpressionCache(workerData.module);

// The on-disk store dynalite opens, caught as it is made: dynalite opens it in the background and,
// when that fails (a damaged or foreign .stepforge/dynamodb), only says "Database is closed" later,
// from a request, as an uncaught error. Waiting for the open before listening reports the cause
// instead. dynalite takes `Level` from the 'level' module when its db module loads, so the
// subclass goes there first; it changes nothing but remembering the instances.
const stores = [];
const levelModule = createRequire(workerData.module)('level');
const { Level } = levelModule;
levelModule.Level = class CaughtLevel extends Level {
  constructor(...args) {
    super(...args);
    stores.push(this);
  }
};
const dynalite = require(workerData.module);

/** What a failed open says: LevelDB's own reason (the cause), not abstract-level's wrapper. */
function openFailure(e) {
  const cause = e && e.cause && e.cause.message ? e.cause.message : undefined;
  return { error: cause || String((e && e.message) || e), code: 'store_unreadable' };
}

let server;
parentPort.on('message', (m) => {
  if (m && m.listen && !server) {
    server = dynalite(m.listen.options);
    server.once('error', (e) => parentPort.postMessage({ error: String((e && e.message) || e) }));
    Promise.all(stores.map((db) => db.open())).then(
      () => server.listen(0, m.listen.host, () => parentPort.postMessage({ port: server.address().port })),
      (e) => parentPort.postMessage(openFailure(e)),
    );
    return;
  }
  if (m !== 'close') return;
  if (!server) {
    parentPort.postMessage({ closed: true });
    parentPort.close();
    return;
  }
  // Idle keep-alive sockets would hold close() for up to 30 s; the store closes in the callback.
  server.close(() => {
    parentPort.postMessage({ closed: true });
    parentPort.close();
  });
  if (server.closeAllConnections) server.closeAllConnections();
});
