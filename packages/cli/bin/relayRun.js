'use strict';
// The thin client of `stepforge run`: when the project in the working directory has a live
// `stepforge serve` (its .stepforge/stack.json names a live process and the API's URL and token),
// the command runs there (serve's POST /cli/run, src/commands/relayedRun.ts) and this process only
// sends the command line, its directory, environment and input, then writes what comes back as it
// comes. It loads no bundle, no AWS SDK, no engine and starts no dynalite worker: the process that
// holds the stack already has them loaded, and a `run` started here would only have connected to it.
//
// It gives way (resolves undefined, having written nothing) whenever the command should run here
// instead: no live serve, STEPFORGE_NO_RELAY=1, options that change what a connected run does
// (`--in-memory` runs on a stack of its own; `--provider` is for a stack this process opens, and
// the command itself says so when connected), a terminal on standard input that `--input -` would
// read, or serve refusing or not answering before the command started there.
const { fstatSync, readFileSync } = require('node:fs');
const http = require('node:http');
const { liveStack } = require('./liveStack.js');

/** Whether the options (or the durability tests' crash points) rule out relaying: the command runs in this process then. */
function ownStackOptions(argv) {
  // The durability tests' crash points kill the process that runs the command: that is this one.
  if (process.env.STEPFORGE_TEST_CRASH_AT !== undefined) return true;
  return argv.some((a) => a === '--in-memory' || a === '--provider' || a.startsWith('--provider=') || a.startsWith('--in-memory='));
}

/** The value of `--input` on the command line, undefined when it is not given (the last one counts, as parseArgs takes it). */
function inputFlag(argv) {
  let value;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') break;
    if (a === '--input') value = argv[i + 1];
    else if (a.startsWith('--input=')) value = a.slice('--input='.length);
  }
  return value;
}

/** Whether standard input is a pipe or a file, as the CLI decides it (CliIo's stdinIsPipeOrFile). */
function stdinIsPipeOrFile() {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isFile();
  } catch {
    return false;
  }
}

/** The live serve of the project in `cwd` (a live stack that publishes its API): its API URL and token, or undefined. */
function liveServe(cwd) {
  const { pid, apiUrl, apiToken } = liveStack(cwd) ?? {};
  if (typeof apiUrl !== 'string' || !/^http:\/\/127\.0\.0\.1:\d+$/.test(apiUrl) || typeof apiToken !== 'string' || apiToken === '') return undefined;
  return { apiUrl, apiToken, pid };
}

/**
 * Runs `stepforge run ARGS` (`argv` without `run`) on the project's live serve. Resolves the exit
 * code once the command has ended there and everything it wrote has been written here, or
 * undefined when it did not start there (the caller runs the command itself).
 */
function relayRun(argv) {
  if (process.env.STEPFORGE_NO_RELAY === '1' || ownStackOptions(argv) || argv.includes('--help') || argv.includes('-h')) return Promise.resolve(undefined);
  const cwd = process.cwd();
  const serve = liveServe(cwd);
  if (serve === undefined) return Promise.resolve(undefined);
  const stdinPiped = stdinIsPipeOrFile();
  const input = inputFlag(argv);
  const fromStdin = input === '-' || input === '@-';
  // The command reads standard input only in these cases; reading it otherwise could wait forever
  // on a pipe the user never meant as input.
  let stdin;
  if (fromStdin || (input === undefined && stdinPiped)) {
    if (!stdinPiped && fromStdin) return Promise.resolve(undefined);
    try {
      stdin = readFileSync(0, 'utf8');
    } catch {
      return Promise.resolve(undefined);
    }
  }
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
  const body = JSON.stringify({ argv, cwd, env, isTTY: Boolean(process.stdout.isTTY), stdinPiped, ...(stdin !== undefined ? { stdin } : {}) });
  return new Promise((resolveOnce) => {
    let started = false;
    let code;
    let settled = false;
    // The response's end, its error and the request's error can each come: the first one settles.
    const resolve = (outcome) => {
      if (settled) return;
      settled = true;
      resolveOnce(typeof outcome === 'function' ? outcome() : outcome);
    };
    const ended = () => (code !== undefined ? code : lost(serve, argv));
    const req = http.request(
      `${serve.apiUrl}/cli/run`,
      {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${serve.apiToken}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          // Refused (an older serve, another project, a token that changed): nothing ran there.
          res.resume();
          resolve(undefined);
          return;
        }
        started = true;
        res.setEncoding('utf8');
        let pending = '';
        const frame = (line) => {
          let f;
          try {
            f = JSON.parse(line);
          } catch {
            return; // Not a frame serve writes (an empty last line).
          }
          if (f === null || typeof f !== 'object') return;
          if (typeof f.out === 'string') process.stdout.write(f.out);
          else if (typeof f.err === 'string') process.stderr.write(f.err);
          else if (typeof f.exit === 'number') code = f.exit;
        };
        res.on('data', (chunk) => {
          pending += chunk;
          for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
            frame(pending.slice(0, nl));
            pending = pending.slice(nl + 1);
          }
        });
        res.on('end', () => {
          frame(pending);
          resolve(ended);
        });
        res.on('error', () => resolve(ended));
      },
    );
    req.on('error', () => resolve(started ? ended : undefined));
    req.end(body);
  });
}

/**
 * The serve running the command stopped before the command ended (Ctrl-C on serve): said as every
 * command says an error, `stack_closed` as the run service names it, exit 1.
 */
function lost(serve, argv) {
  const message = `the stepforge serve (pid ${serve.pid}) running this command stopped before it ended; a run it started goes on when a command of this project holds the stack again`;
  const hint = 'start stepforge serve again, or run stepforge runs list to find the run and follow it with stepforge runs show ID';
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify({ error: { class: 'stack_closed', message, line: null, column: null, hint } })}\n`);
  else process.stderr.write(`error[stack_closed] ${message}\n  = help: ${hint}\n`);
  return 1;
}

module.exports = { relayRun };
