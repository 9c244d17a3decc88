import { fstatSync, readFileSync } from 'node:fs';
import { isStepforgeError } from '@stepforge/contract';

/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readonly isTTY: boolean;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** All of standard input, read when a command is told to (`--input -`); tests pass their text. */
  readonly stdin?: () => string;
  /** Standard input is a pipe or a file (not a terminal): `run` with no --input reads its input there. */
  readonly stdinPiped?: boolean;
}

/** Exit codes: 0 success, 1 the workflow or the document failed, 2 a usage error */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A usage mistake on the command line (exit 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage';
}

/**
 * A reader that closed its end of the pipe (`stepforge approvals list | head -1`) ends the command
 * as SIGPIPE ends other tools, quietly, rather than as an unhandled 'error' event and its stack.
 */
const watched = new WeakSet<NodeJS.WriteStream>();
function endOnClosedPipe(stream: NodeJS.WriteStream): void {
  // Whatever else listens (a worker thread's output is piped into the process's, and a pipe
  // listens for errors until it ends), this listener stays.
  if (watched.has(stream)) return;
  watched.add(stream);
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(process.exitCode ?? 0);
  });
}

/** The process-backed CliIo. */
/**
 * Whether standard input is a shell pipe (`git diff | stepforge run …`) or a file (`< input.json`).
 * A terminal is not, and neither is a socket — what a parent process that spawns the CLI with
 * piped stdio hands it, and may never close — nor /dev/null. It looks at fd 0 without touching
 * `process.stdin`, which would make the descriptor non-blocking and its synchronous read fail.
 */
function stdinIsPipeOrFile(): boolean {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isFile();
  } catch {
    return false;
  }
}

export function processIo(): CliIo {
  endOnClosedPipe(process.stdout);
  endOnClosedPipe(process.stderr);
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stdout.isTTY),
    cwd: process.cwd(),
    env: process.env,
    stdin: () => readFileSync(0, 'utf8'),
    stdinPiped: stdinIsPipeOrFile(),
  };
}

/**
 * Prints an error as every command does — `error[class] FILE:LINE:COL: message` with a caret excerpt,
 * or `{"error":{…}}` with --json — and returns the exit code it deserves.
 */
export function reportError(io: CliIo, e: unknown, json: boolean): number {
  if (e !== null && typeof e === 'object' && (e as { name?: unknown }).name === 'UsageError') {
    const message = (e as Error).message;
    // --json: the usage text, which the message carries for the terminal, as a field of its own.
    const [first, usage] = message.split(/\nUsage: /, 2) as [string, string | undefined];
    if (json)
      io.out(
        JSON.stringify({
          error: { class: 'usage', message: first, line: null, column: null, ...(usage !== undefined ? { usage: usage.trim() } : {}) },
        }) + '\n',
      );
    else io.err(`error[usage] ${message}\n`);
    return EXIT_USAGE;
  }
  if (isStepforgeError(e)) {
    if (json) io.out(JSON.stringify({ error: e.toJSON() }) + '\n');
    else io.err(e.toString() + '\n');
    return EXIT_FAILURE;
  }
  // Anything else is a bug in Stepforge, but the user still gets a named, parseable error.
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (json) io.out(JSON.stringify({ error: { class: 'internal', message, line: null, column: null } }) + '\n');
  else io.err(`error[internal] ${message}\n`);
  return EXIT_FAILURE;
}
