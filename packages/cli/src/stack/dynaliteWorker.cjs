// The dynalite worker thread (see startDynaliteWorker.ts). Plain CommonJS so the thread runs this
// file as it is, from src (tsx, vitest), from dist (tsc copies it) and beside the CLI bundle.
//
// It loads dynalite as soon as it starts, and listens only once asked to (`{ listen: { host,
// options } }`): so the CLI's launcher can start it before the CLI itself has loaded (bin/loadCli.js),
// letting the ~200 files of dynalite load on the other core meanwhile, and nothing is opened (the
// on-disk store, a port) until the stack decides to own it. An unused worker does nothing and
// holds nothing.
'use strict';

const { parentPort, workerData } = require('node:worker_threads');

// The parse cache goes on dynalite's expression parsers before dynalite loads them.
if (workerData.expressionCache) require(workerData.expressionCache).installExpressionCache(workerData.module);
const dynalite = require(workerData.module);

let server;
parentPort.on('message', (m) => {
  if (m && m.listen && !server) {
    server = dynalite(m.listen.options);
    server.once('error', (e) => parentPort.postMessage({ error: String((e && e.message) || e) }));
    server.listen(0, m.listen.host, () => parentPort.postMessage({ port: server.address().port }));
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
