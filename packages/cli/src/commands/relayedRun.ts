import { realpathSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { reportError, type CliIo } from '../CliIo.js';

/** The path of serve's route that runs `stepforge run` for a thin client (bin/relayRun.js). */
export const RELAYED_RUN_PATH = '/cli/run';

/**
 * What the thin client sends: the command line after `run`, its working directory, environment and
 * terminal, and standard input when the run reads it (read by the client, since this process
 * cannot read another's).
 */
interface RelayedRunRequest {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly isTTY: boolean;
  readonly stdinPiped: boolean;
  readonly stdin?: string;
}

/**
 * Runs `stepforge run` as its thin client asked (`POST /cli/run`, behind serve's token check) and
 * streams what the command writes back as it writes it: one JSON object a line, `{"out":…}` and
 * `{"err":…}` in the order written, and `{"exit":code}` last.
 *
 * Why: a `run` that finds a live serve would otherwise load the whole CLI, the AWS SDK and the
 * engine, only to connect to this process's stack and follow its run from outside. Here the same
 * command code runs in the process that already holds the stack (openStack shares it with this
 * process's own commands), against the client's directory, environment and input, so what the
 * user sees is what `run` prints, from a client that loads next to nothing.
 *
 * Refused before anything runs (the client then runs the command itself): a body that is not such
 * a request (400 `invalid_request`), and a directory that is not this serve's project (409
 * `wrong_project`: the stack is the project's, and relative paths would name other files).
 */
export async function answerRelayedRun(
  body: string,
  res: ServerResponse,
  projectDir: string,
  refuse: (status: number, error: { readonly code: string; readonly message: string }) => void,
): Promise<void> {
  const request = parseRelayedRun(body);
  if (typeof request === 'string') return refuse(400, { code: 'invalid_request', message: request });
  if (!sameDirectory(request.cwd, projectDir))
    return refuse(409, { code: 'wrong_project', message: `this serve holds the stack of ${projectDir}, not of ${request.cwd}` });
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  // A client that went away (Ctrl-C) leaves the run going on here, as a connected run's would.
  const send = (frame: Record<string, unknown>) => {
    if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify(frame)}\n`);
  };
  const stdin = request.stdin;
  const io: CliIo = {
    out: (text) => send({ out: text }),
    err: (text) => send({ err: text }),
    isTTY: request.isTTY,
    cwd: projectDir,
    // Without the durability tests' crash point: it would kill serve, not the client it was set for.
    env: Object.fromEntries(Object.entries(request.env).filter(([k]) => k !== 'STEPFORGE_TEST_CRASH_AT')),
    stdin: () => {
      if (stdin === undefined) throw new Error('the thin client sent no standard input');
      return stdin;
    },
    stdinPiped: request.stdinPiped,
  };
  let code: number;
  try {
    const { default: run } = await import('./run.js');
    code = await run.run([...request.argv], io);
  } catch (e) {
    code = reportError(io, e, request.argv.includes('--json'));
  }
  send({ exit: code });
  res.end();
}

function parseRelayedRun(body: string): RelayedRunRequest | string {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  const r = v as Partial<Record<keyof RelayedRunRequest, unknown>>;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'the body is not a JSON object';
  if (!Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string')) return '"argv" must be an array of strings';
  if (typeof r.cwd !== 'string' || r.cwd === '') return '"cwd" must be a directory';
  if (r.env === null || typeof r.env !== 'object' || Array.isArray(r.env) || !Object.values(r.env).every((x) => typeof x === 'string'))
    return '"env" must be an object of strings';
  if (typeof r.isTTY !== 'boolean' || typeof r.stdinPiped !== 'boolean') return '"isTTY" and "stdinPiped" must be booleans';
  if (r.stdin !== undefined && typeof r.stdin !== 'string') return '"stdin" must be a string when given';
  return r as RelayedRunRequest;
}

function sameDirectory(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
