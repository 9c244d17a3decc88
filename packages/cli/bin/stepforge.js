#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via prepare).
// The AWS SDK warns on every start that releases after January 2027 need Node 22; the CLI runs
// the SDK only against loopback emulators here, so the notice is noise on each command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { main } = await import('../dist/main.js');
main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`internal error: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exitCode = 70;
});
