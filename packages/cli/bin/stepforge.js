#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via prepare).
import { main } from '../dist/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`internal error: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exitCode = 70;
});
