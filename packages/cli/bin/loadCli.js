// Loads the CLI for bin/stepforge.js: the one-file bundle (dist/bundle/stepforge.cjs, written by
// scripts/bundleCli.mjs in `npm run build`) with V8's code cache, else dist/main.js as tsc built it.
//
// Why: loading ~1,500 module files took most of every command's time (1.75 s for `stepforge run`
// of the quickstart, 0.67 s for `--help`). The bundle is one file; its compiled code is cached per
// command (`stepforge.<command>.<bundle id>.v8cache`, written after the first run of that command, holding
// the functions that command compiled), so later runs skip most of the parsing and compiling too.
//
// dist/ is used instead when the bundle is missing, when it is older than a build of the packages
// it holds (`tsc -b` without the bundle step: the bundle would run older code), or with
// STEPFORGE_NO_BUNDLE=1 (stack traces then name the source files). V8 checks a cache against the
// source and its own version and flags and rejects one that does not match: it is then written
// again. A cache that cannot be written (a read-only install) is simply not kept; the cache files
// go next to the bundle, or into STEPFORGE_CODE_CACHE_DIR when that is set.
//
// For the commands that open the embedded stack, it first starts the dynalite worker thread
// (dist/bundle/dynaliteWorker.cjs): the thread loads dynalite (~200 files) on the other core while
// this one reads and runs the bundle, and the stack takes it over when it opens (startDynaliteWorker)
// instead of starting one then and waiting for it. It opens nothing until asked, and is unref'd, so
// a command that connects to another process's stack, or fails first, exits as before. It is not
// started when the project already has a live stack (a `serve`, or another command's), which the
// command will connect to instead.
'use strict';
// CommonJS (bin/package.json): an ES-module entry starts Node's ES module loader, 10-20 ms of
// every command's start-up on the 2-core build machine, before the bundle's first line.
const { isAscii } = require('node:buffer');
const { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');
const { liveStack } = require('./liveStack.js');
const { BUNDLE_WRAPPER } = require('./bundleWrapper.js');

const cli = join(__dirname, '..');
const BUNDLE_DIR = join(cli, 'dist', 'bundle');
/** The build records of the workspace packages the bundle holds (tsc -b rewrites them when it builds). */
const BUILDS = [join(cli, 'dist'), join(cli, '..', 'compiler', 'dist'), join(cli, '..', 'engine', 'dist'), join(cli, '..', 'runtime', 'dist'), join(cli, '..', 'embedded', 'dist')].map((d) => join(d, '.tsbuildinfo'));

function mtimeOf(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The bundle that serves `command`: scripts/bundleCli.mjs writes one per command that runs no
 * workflow (holding that command alone) and one holding every command, and names in bundles.json
 * which serves which. Undefined when there is no usable table (an older build): dist/ then.
 */
function bundleFor(command) {
  let table;
  try {
    table = JSON.parse(readFileSync(join(BUNDLE_DIR, 'bundles.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const name = (typeof command === 'string' && Object.hasOwn(table.commands ?? {}, command)) ? table.commands[command] : table.otherwise;
  if (typeof name !== 'string' || !/^stepforge(-[a-z]+)?$/.test(name)) return undefined;
  return { file: join(BUNDLE_DIR, `${name}.cjs`), idFile: join(BUNDLE_DIR, `${name}.id`) };
}

/** Whether the bundle is there and no package it holds was built after it. */
function bundleIsCurrent(BUNDLE) {
  const bundled = mtimeOf(BUNDLE);
  if (bundled === undefined) return false;
  return BUILDS.every((f) => (mtimeOf(f) ?? 0) <= bundled);
}

/** The commands that open the embedded stack, and so start dynalite. */
const STACK_COMMANDS = new Set(['run', 'runs', 'approvals', 'serve']);
/**
 * The commands whose `--help` the help bundle answers: they have no help text of their own (the
 * registry's `ownHelp`), so main prints their usage line and summary without loading them, and
 * `stepforge run --help` reads no embedded stack.
 */
const HELP_FROM_TABLE = new Set([...STACK_COMMANDS, 'store']);
/**
 * Whether the project in the working directory has a live stack (`.stepforge/stack.json` naming a
 * process that is alive): a stack command then connects to it (StackRegistry.findLive, which
 * checks the stack further) and opens no dynalite of its own, so none is started ahead. A wrong
 * guess costs only the head start: the stack starts its worker when it opens, as without one.
 */
function liveStackHere() {
  return liveStack(process.cwd()) !== undefined;
}

/**
 * The bundle's text, from its bytes. The build leaves it ASCII only (scripts/bundleCli.mjs), and ASCII bytes are the
 * same text read as Latin-1, which Node copies into a V8 string as they are; reading them as UTF-8
 * decodes every byte (about 100 ms for the 8 MB bundle on the 2-core build machine, against 2 ms).
 * A bundle with another byte (one built by hand) is read as UTF-8, as before. `built`: the build
 * named it (its .id file, written after the bundle was made ASCII only), so it is not checked
 * again (isAscii reads every byte: ~8 ms of `run`'s start for its 5.5 MB bundle).
 */
function textOf(bytes, built) {
  return built || isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * Reads a whole file into `into` (grown when too small), returning the buffer and the bytes read.
 * The bundle and then its code cache are read into one buffer: the bundle's bytes are done with
 * once they are a string, and each fresh page a second buffer would touch costs a page fault
 * (~1,300 of `run`'s start-up for its 2.6 MB cache; ~11 us each on the 2-core build machine).
 */
function readWhole(file, into) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = into !== undefined && into.length >= size ? into : Buffer.allocUnsafeSlow(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buf, at, size - at, at);
      if (n === 0) break; // Shortened meanwhile: what is there (V8 rejects a short cache; a short bundle fails as it would have).
      at += n;
    }
    return { buf, length: at };
  } finally {
    closeSync(fd);
  }
}

/** The bundle's text as the script to compile: the build writes the module wrapper into the file; one without it gets it here. */
function wrapped(text) {
  return text.startsWith(BUNDLE_WRAPPER.head) && text.endsWith(BUNDLE_WRAPPER.tail) ? text : `${BUNDLE_WRAPPER.head}${text}${BUNDLE_WRAPPER.tail}`;
}

/** Runs a compiled command bundle as a CommonJS module of its own path; returns the module (its exports: `main`, …). */
function runBundle(script, file) {
  const module = { exports: {} };
  // The bundle imports files outside the code (user functions, handler modules) through this
  // module's import(): one in code from the cache has no loader callback on Node 20 (see
  // scripts/bundleCli.mjs).
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file), (url) => import(url));
  return module;
}

/** A command bundle's exports, loaded without a code cache (the tests load bundles this way). */
function requireBundle(file) {
  return runBundle(new vm.Script(wrapped(textOf(readFileSync(file), false)), { filename: file }), file).exports;
}

/** The slot startDynaliteWorker takes a started worker from (see there). */
const PREWARMED = Symbol.for('stepforge.prewarmedDynaliteWorker');

/** Starts the bundle's dynalite worker, loading dynalite and nothing more, for the stack to take over. */
function prewarmDynaliteWorker(BUNDLE) {
  const dir = dirname(BUNDLE);
  const script = join(dir, 'dynaliteWorker.cjs');
  const expressionCache = join(dir, 'dynaliteExpressionCache.cjs');
  // The worker requires the loopback guard beside it when it comes to listen.
  if (!existsSync(script) || !existsSync(expressionCache) || !existsSync(join(dir, 'loopbackGuard.cjs'))) return;
  let module;
  try {
    module = createRequire(BUNDLE).resolve('dynalite');
  } catch {
    return; // The stack reports a missing dynalite itself, as it always has.
  }
  // Loaded here, not imported at the top: node:worker_threads and the internals it pulls in cost
  // a few ms of start-up that the commands which start no worker (validate, graph, --help) skip.
  const { Worker } = require('node:worker_threads');
  const worker = new Worker(script, { workerData: { module, expressionCache } });
  worker.unref();
  // Whatever goes wrong in it before the stack takes it is the stack's to report, from a worker of
  // its own; once taken, the listeners go (`detach`), so that a later error is unhandled, as it is
  // for a worker the stack started.
  const end = () => { prewarmed.ended = true; };
  const prewarmed = {
    worker,
    ended: false,
    detach() {
      worker.off('error', end);
      worker.off('exit', end);
    },
  };
  worker.on('error', end);
  worker.on('exit', end);
  globalThis[PREWARMED] = prewarmed;
  return prewarmed;
}

/**
 * The CLI module (`{ main }`) and `settle()`, to call once the command has finished: it writes the
 * command's code cache when there was none or V8 rejected it. `how` says which was loaded. `argv`
 * (the command line after `stepforge`) says whether the command opens the stack; `prewarmed()`
 * says what became of a dynalite worker started ahead (`taken` by the stack, or `unused`), if one was.
 */
async function loadCli(command, argv = []) {
  const helpAsked = argv.slice(1).includes('--help') || argv.slice(1).includes('-h');
  const bundle = process.env.STEPFORGE_NO_BUNDLE === '1' ? undefined : bundleFor(helpAsked && HELP_FROM_TABLE.has(command) ? undefined : command);
  if (bundle === undefined || !bundleIsCurrent(bundle.file)) {
    return { cli: await import('../dist/main.js'), how: 'dist', settle() {}, prewarmed: () => undefined };
  }
  const { file: BUNDLE, idFile: BUNDLE_ID } = bundle;
  const ahead = STACK_COMMANDS.has(command) && !helpAsked && !liveStackHere() ? prewarmDynaliteWorker(BUNDLE) : undefined;
  const name = /^[a-z]+$/.test(command ?? '') ? command : 'default';
  // Named by the bundle's content (stepforge.id, see scripts/bundleCli.mjs): V8 would take the
  // cache of another bundle of the same length.
  const id = existsSync(BUNDLE_ID) ? readFileSync(BUNDLE_ID, 'utf8').trim() : '';
  const built = /^[0-9a-f]{16}$/.test(id);
  const cacheFile = built ? join(process.env.STEPFORGE_CODE_CACHE_DIR || dirname(BUNDLE), `stepforge.${name}.${id}.v8cache`) : undefined;
  const read = readWhole(BUNDLE);
  const text = wrapped(textOf(read.buf.subarray(0, read.length), built));
  let cachedData;
  if (cacheFile !== undefined && existsSync(cacheFile)) {
    const cache = readWhole(cacheFile, read.buf);
    cachedData = cache.buf.subarray(0, cache.length);
  }
  const script = new vm.Script(text, { filename: BUNDLE, ...(cachedData ? { cachedData } : {}) });
  const module = runBundle(script, BUNDLE);
  const stale = cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true);
  return {
    cli: module.exports,
    how: `bundle, code cache ${cachedData === undefined ? 'none yet' : script.cachedDataRejected ? 'rejected' : 'used'}`,
    prewarmed: () => (ahead === undefined ? undefined : globalThis[PREWARMED] === ahead ? 'unused' : 'taken'),
    settle() {
      if (!stale) return;
      // Written whole and renamed, so a command starting meanwhile reads the old cache or the new one.
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      try {
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // Not writable here (or the disk is full): the next run compiles again.
        rmSync(tmp, { force: true });
      }
    },
  };
}

module.exports = { loadCli, requireBundle };
