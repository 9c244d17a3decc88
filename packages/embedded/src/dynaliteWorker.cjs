// The dynalite worker thread (see startDynaliteWorker.ts). Plain CommonJS so the thread runs this
// file as it is, from src (tsx, vitest), from dist (tsc copies it) and beside the CLI bundle.
//
// It loads dynalite as soon as it starts, and listens only once asked to (`{ listen: { host,
// options, guard } }`, guard: loopbackGuard.cjs's options, the stack's credentials): so the CLI's launcher can start it before the CLI itself has loaded (bin/loadCli.js),
// letting the ~200 files of dynalite load on the other core meanwhile, and nothing is opened (the
// on-disk store, a port) until the stack decides to own it. An unused worker does nothing and
// holds nothing.
'use strict';

const { existsSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { parentPort, workerData } = require('node:worker_threads');

/** The one-file dynalite's code cache to write once its store has closed, when it had none (see loadOneFile). */
let writeCacheAtClose;

// dynalite as one file (dynalite.cjs, which the CLI's build writes beside this file in its bundle
// folder; scripts/dynaliteEntry.cjs there says what it exports): one file to read and compile
// instead of some 90 through the CommonJS loader. Elsewhere (src, dist) dynalite is required from
// its package, by the resolved path the stack passes in.
const ONE_FILE = join(__dirname, 'dynalite.cjs');
const oneFile = existsSync(ONE_FILE) ? loadOneFile(ONE_FILE) : undefined;

/**
 * Runs the one-file dynalite as require would, but with V8's code cache, as bin/loadCli.js runs the
 * command bundles: `dynalite.<id>.v8cache` (the id is the file's content hash, from `dynalite.id`
 * beside it) next to it or in STEPFORGE_CODE_CACHE_DIR, written when the store closes (so that it
 * holds the functions that served requests) if there was none or V8 refused it. Without an id it
 * is required as it is.
 */
function loadOneFile(file) {
  const { readFileSync } = require('node:fs');
  const { dirname } = require('node:path');
  const vm = require('node:vm');
  let id = '';
  try {
    id = readFileSync(join(__dirname, 'dynalite.id'), 'utf8').trim();
  } catch {
    // No id (a folder put together by hand): no cache.
  }
  if (!/^[0-9a-f]{16}$/.test(id)) return require(file);
  const cacheFile = join(process.env.STEPFORGE_CODE_CACHE_DIR || __dirname, `dynalite.${id}.v8cache`);
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // None yet: written at close.
  }
  // The build leaves it ASCII only, which read as Latin-1 is the same text without decoding it.
  const source = readFileSync(file, 'latin1');
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}
})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  if (cachedData === undefined || script.cachedDataRejected === true) writeCacheAtClose = { script, cacheFile };
  return module.exports;
}

// The parse cache goes on dynalite's expression parsers before dynalite loads them.
if (workerData.expressionCache) {
  const cache = require(workerData.expressionCache);
  if (oneFile) cache.installExpressionCacheOn(oneFile.parsers());
  else cache.installExpressionCache(workerData.module);
}

// The on-disk store dynalite opens, caught as it is made: dynalite opens it in the background and,
// when that fails (a damaged or foreign .stepforge/dynamodb), only says "Database is closed" later,
// from a request, as an uncaught error. Waiting for the open before listening reports the cause
// instead. dynalite takes `Level` from the 'level' module when its db module loads, so the
// subclass goes there first; it remembers the instances, and reads synchronously (below).
// It also sets createIfMissing, which dynalite does not pass: LevelDB asked to open a damaged
// directory (no CURRENT) with createIfMissing creates an empty store there and deletes the old
// table files as obsolete, so an existing store is opened with it off.
const stores = [];
let createIfMissing = true;
const levelModule = oneFile ? oneFile.level() : createRequire(workerData.module)('level');
const { Level } = levelModule;
// Its reads are synchronous: classic-level's asynchronous get goes through libuv's thread pool (a
// wake-up of a pool thread, a snapshot taken under LevelDB's lock, a wake-up of this thread to
// resolve it), which cost more than the read itself, and every request reads the table's
// description and, for a conditional write, the item first. A synchronous get reads the same state
// at the same moment (the asynchronous one takes its snapshot when it is called), so dynalite's
// conditions see what they saw; this thread has nothing else to do meanwhile.
levelModule.Level = class CaughtLevel extends Level {
  constructor(location, options) {
    super(location, { ...options, createIfMissing });
    stores.push(this);
  }

  _get(key, options) {
    if (!this.supports.getSync) return super._get(key, options);
    try {
      return Promise.resolve(this._getSync(key, options));
    } catch (e) {
      return Promise.reject(e);
    }
  }
};
const dynalite = oneFile ? oneFile.dynalite() : require(workerData.module);

/** LevelDB's own reason for a failed open (the cause), not abstract-level's wrapper. */
function reasonOf(e) {
  return e && e.cause && e.cause.message ? e.cause.message : String((e && e.message) || e);
}

/** How long an open waits for another process's hold on the store (LevelDB's LOCK) to end. */
const LOCK_WAIT_MS = 10_000;

/**
 * Opens a store. Another process holding LevelDB's LOCK is most often the stack's previous owner
 * in its last moments (it has released the stack but its process has not ended yet, and LevelDB's
 * lock lasts as long as the process): so a held lock is waited for, up to LOCK_WAIT_MS; any
 * other failure is final at once.
 */
async function openStore(db) {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await db.open();
    } catch (e) {
      const reason = reasonOf(e);
      const locked = /\block\b.*LOCK/.test(reason);
      if (!locked) throw Object.assign(new Error(reason), { code: 'store_unreadable' });
      if (Date.now() > until) throw Object.assign(new Error(reason), { code: 'store_in_use' });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const { EventEmitter } = require('node:events');

let server;
/** The store's open, once `listen` has started it; and whether it is done (requests then go straight to dynalite). */
let storeOpening;
let storeOpen = false;

/**
 * Runs `f` (answering a request) now if the store is open, else once its open has settled: in
 * the order the requests came, since the callbacks of one promise run in the order they were
 * added. After a failed open, dynalite answers from a closed store.
 */
function whenOpen(f) {
  if (storeOpen) return f();
  storeOpening.then(f, f);
}
/** The private ports open to the owner's clients (answerPort), closed with the store. */
const ports = new Set();
/** dynalite's own request listener, without the loopback guard: what a private port's requests reach. */
let serve;

/**
 * A response as dynalite writes one (statusCode, setHeader, end), answered over `port` as
 * `{ id, statusCode, headers, body }` instead of HTTP: see answerPort.
 */
function portResponse(port, id) {
  return answerTo((answer) => port.postMessage({ id, ...answer }));
}

/** A response as dynalite writes one, handed to `done` as `{ statusCode, headers, body }`. */
function answerTo(done) {
  const headers = {};
  return {
    statusCode: 200,
    setHeader(name, value) {
      headers[String(name).toLowerCase()] = String(value);
    },
    getHeader(name) {
      return headers[String(name).toLowerCase()];
    },
    end(body) {
      done({ statusCode: this.statusCode, headers, body: body === undefined ? '' : String(body) });
    },
  };
}

/**
 * Answers the requests the owner sent with `listen` (`prepare`: `{ target, body }` each, as
 * withPortCommands sends an operation), one after the other, as soon as the store has opened:
 * the stack's first requests (its table's description, the lease epoch, its identity) are answered
 * on this thread while the owner starts the rest, instead of waiting for it to send them. Each
 * answer is `{ statusCode, headers, body }`, an error answer included: what they mean is the
 * owner's to say.
 */
async function prepareStore(requests) {
  const answers = [];
  for (const r of requests || []) answers.push(await new Promise((resolve) => dispatch(r, answerTo(resolve))));
  return answers;
}

/**
 * The authorization headers dynalite wants to see on a request (it refuses one without them as
 * MissingAuthenticationToken, but never verifies the signature) for an operation that comes
 * over the port unsigned: the port is not a place anyone but the owner's thread can reach.
 */
const UNSIGNED = {
  authorization: 'AWS4-HMAC-SHA256 Credential=port/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=unsigned',
  'x-amz-date': '20000101T000000Z',
};

/**
 * Answers the DynamoDB requests of the stack's owner that come over a MessagePort (`{ connect:
 * port }`; WorkerPortHttpHandler.ts is the other end): each message `{ id, method, url, headers,
 * body }` is the HTTP request the SDK built and signed (or `{ id, target, body }`, an item
 * operation sent as plain JSON by withPortCommands.ts), handed to dynalite's request listener as a
 * request object that emits the body, with a response object that posts the answer back. No socket,
 * no HTTP framing or parsing on either side. The loopback guard is not in this path: it keeps out
 * browsers and other users of the machine, who can reach a TCP port but never this port, whose
 * other end only the owner's thread holds.
 */
function answerPort(port) {
  ports.add(port);
  port.on('message', (m) => whenOpen(() => dispatch(m, portResponse(port, m.id))));
}

/** Hands one request that came without HTTP (over a port, or with `listen`) to dynalite, answering on `res`. */
function dispatch(m, res) {
  const req = new EventEmitter();
  if (m.target !== undefined) {
    // An operation sent without an HTTP request around it (WorkerPortHttpHandler's call): the
    // request dynalite would get for it. Nothing on this path checks a signature (dynalite
    // only checks that the headers of one are there), so it carries none.
    req.method = 'POST';
    req.url = '/';
    req.headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': m.target, ...UNSIGNED };
  } else {
    req.method = m.method;
    req.url = m.url;
    req.headers = m.headers;
  }
  serve(req, res);
  if (m.body) req.emit('data', Buffer.from(m.body));
  req.emit('end');
}

parentPort.on('message', (m) => {
  if (m && m.connect) {
    if (serve) answerPort(m.connect);
    else m.connect.close();
    return;
  }
  if (m && m.listen && !server) {
    createIfMissing = m.listen.createIfMissing !== false;
    server = dynalite(m.listen.options);
    // The port is taken and said at once, and the store opens meanwhile (`{ opened: true }`, or
    // the open's error, follows): the owner starts the rest of its stack while LevelDB opens, on
    // this thread. A request that comes before the store is open (the owner's own, over a private
    // port; nobody else knows the port until the owner publishes it, after the open) waits for
    // it; after a failed open it meets a closed store, and the owner is closing the stack anyway.
    storeOpening = Promise.all(stores.map(openStore));
    serve = server.listeners('request')[0];
    server.removeAllListeners('request');
    // An HTTP request's body stays in its stream until dynalite reads it.
    server.on('request', (req, res) => whenOpen(() => serve(req, res)));
    // Browsers refused and, with the stack's credentials, every request's signature verified,
    // before dynalite (which answers any Origin with `Access-Control-Allow-Origin: *`) sees it.
    require('./loopbackGuard.cjs').guardServer(server, m.listen.guard || {});
    server.once('error', (e) => parentPort.postMessage({ error: String((e && e.message) || e) }));
    server.listen(0, m.listen.host, () => parentPort.postMessage({ port: server.address().port }));
    storeOpening.then(
      async () => {
        storeOpen = true;
        parentPort.postMessage({ opened: true, answers: await prepareStore(m.listen.prepare) });
      },
      (e) => parentPort.postMessage({ error: e.message, code: e.code }),
    );
    return;
  }
  if (m !== 'close') return;
  // Once the store has closed (LevelDB's files written and closed), the owner goes on without
  // waiting for this thread to end (startDynaliteWorker's close): with nothing left open here, the
  // thread then ends on its own, on its own core, while the owner closes the rest.
  const closed = () => {
    if (writeCacheAtClose && server) {
      // Written whole and renamed, so a worker starting meanwhile reads the old cache or the new one.
      const { script, cacheFile } = writeCacheAtClose;
      const tmp = `${cacheFile}.${process.pid}.${require('node:worker_threads').threadId}.tmp`;
      try {
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // Not writable here: the next start compiles again.
        rmSync(tmp, { force: true });
      }
    }
    parentPort.postMessage({ closed: true });
    for (const port of ports) port.close();
    parentPort.close();
  };
  if (!server) {
    closed();
    return;
  }
  // Idle keep-alive sockets would hold close() for up to 30 s; the store closes in the callback.
  server.close(closed);
  if (server.closeAllConnections) server.closeAllConnections();
});
