#!/usr/bin/env node
'use strict';
// Thin launcher: the CLI is compiled to dist/ and bundled into dist/bundle/ by `npm run build`
// (run by `npm ci` via prepare); loadCli picks the bundle with its code cache, or dist/ (see there).
// CommonJS (bin/package.json says so): an ES-module entry would start Node's ES module loader first.
// The AWS SDK warns on every start that releases after January 2027 need Node 22; the CLI runs
// the SDK only against loopback emulators here, so the notice is noise on each command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const argv = process.argv.slice(2);
const debug = process.env.STEPFORGE_DEBUG_LOADER === '1';
// The commands that leave nothing behind once main() has resolved (`run` has closed its stack by
// then: the store written and closed, the registry released). They end the process at once:
// left to end by itself, Node first tears down the main thread's isolate and every worker's, tens
// of ms after the last line is written (30-40 ms for `run`'s heap on the 2-core build machine),
// which process.exit() skips. Output still queued (a pipe that was full) is waited for instead.
const EXIT_WHEN_DONE = new Set(['run', 'validate', 'graph', 'compile', 'new']);
const internalError = (err) => {
  process.stderr.write(`internal error: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exitCode = 70;
};
/** Ends the process with `code` once stdout and stderr hold nothing queued (else when they drain, by itself). */
const finish = (code) => {
  process.exitCode = code;
  if (EXIT_WHEN_DONE.has(argv[0]) && process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(code);
};
/** The command run in this process, from its bundle (loadCli). */
function runHere() {
  return require('./loadCli.js')
    .loadCli(argv[0], argv)
    .then(({ cli, how, settle, prewarmed }) => {
      if (debug) process.stderr.write(`stepforge loaded from ${how}\n`);
      return cli.main(argv).then((code) => {
        settle();
        const ahead = prewarmed();
        if (debug && ahead !== undefined) process.stderr.write(`stepforge dynalite worker started ahead: ${ahead}\n`);
        finish(code);
      });
    });
}
// `run` with the project's serve up runs there, through a thin client (relayRun.js says when it gives way).
(argv[0] === 'run' ? require('./relayRun.js').relayRun(argv.slice(1)) : Promise.resolve(undefined))
  .then((relayed) => {
    if (relayed !== undefined) {
      if (debug) process.stderr.write('stepforge ran the command on the project\'s serve (thin client)\n');
      finish(relayed);
      return;
    }
    return runHere();
  })
  .catch(internalError);
