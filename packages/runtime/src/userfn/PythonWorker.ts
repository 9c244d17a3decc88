import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RuntimeError } from '../errors/RuntimeError.js';
import { pythonSourceDir } from './pythonSourceDir.js';

/** One call of a Python user function, as the worker protocol carries it (packages/runtime/python/stepforge_worker.py). */
export interface PythonCall {
  /** The module, relative to the functions folder (`text/fetch_news.py`). */
  readonly module: string;
  /** The function named after `#`, if any. */
  readonly callable?: string;
  readonly input: unknown;
  readonly context: {
    readonly secrets: Record<string, string>;
    readonly runId: string;
    readonly stepId: string;
    readonly workflow: string;
  };
  /** Secret binding name → value: keyword arguments of a function called GraphN's way. */
  readonly kwargs: Record<string, string>;
}

/** Why a call produced no value (see stepforge_userfn.UserFunctionError). */
export interface PythonCallError {
  readonly kind: 'raised' | 'import' | 'signature' | 'input' | 'not_json' | 'not_found' | 'protocol' | 'worker';
  readonly message: string;
  /** The Python exception's class name and message (`raised`, `import`). */
  readonly type?: string;
  readonly exceptionMessage?: string;
  /** The traceback's frames inside the functions folder, paths relative to it. */
  readonly trace: readonly string[];
}

/** The worker's answer to one call, with the print() output the call made. */
export type PythonAnswer =
  | { readonly ok: true; readonly output: unknown; readonly stdout: string; readonly stderr: string; readonly pid: number }
  | { readonly ok: false; readonly error: PythonCallError; readonly stdout: string; readonly stderr: string; readonly pid: number };

/** Options of a PythonWorker. */
export interface PythonWorkerOptions {
  /** The interpreter (STEPFORGE_PYTHON, default `python3`), found on the PATH of `env`. */
  readonly command: string;
  readonly functionsDir: string;
  /** The worker's environment (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Lines the worker wrote outside any call (a thread a function started, Python's own fatal errors). */
  readonly onStderr?: (line: string) => void;
}

interface Pending {
  readonly module: string;
  readonly resolve: (a: PythonAnswer) => void;
  readonly reject: (e: Error) => void;
}

interface Process {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pending: Map<number, Pending>;
  pid?: number;
  ready: boolean;
  /** The first failure of the process itself (not found, could not start), which every call then gets. */
  failure?: RuntimeError;
  lastStderr: string;
  readonly closed: Promise<void>;
}

/** How long close() waits for the worker to leave on its own before it is killed. */
const CLOSE_GRACE_MS = 2000;

/**
 * The embedded stack's long-lived Python process: started on the first call of a Python function
 * (not per call), answering calls by id over JSON lines on stdio, so concurrent calls share it.
 * A worker that dies fails the calls it was running (FunctionError) and the next call starts a new
 * one. `close()` ends it; it also ends by itself when this process does (its stdin closes).
 */
export class PythonWorker {
  readonly #options: PythonWorkerOptions;
  #proc?: Process;
  #nextId = 1;
  #closed = false;

  constructor(options: PythonWorkerOptions) {
    this.#options = options;
  }

  /** The running worker's process id, if one is running. */
  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  /** Runs one call; rejects only when the worker itself fails (ConfigError: no interpreter; FunctionError: it died). */
  call(request: PythonCall): Promise<PythonAnswer> {
    if (this.#closed)
      return Promise.reject(
        new RuntimeError('FunctionError', `the Python worker is closed (the stack is shutting down); ${request.module} did not run`),
      );
    const proc = (this.#proc ??= this.#start());
    if (proc.failure) return Promise.reject(proc.failure);
    const id = this.#nextId++;
    return new Promise<PythonAnswer>((resolve, reject) => {
      proc.pending.set(id, { module: request.module, resolve, reject });
      setRef(proc, true);
      proc.child.stdin.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  /** Ends the worker: its stdin closes and it exits; killed if it has not after a grace period. */
  async close(): Promise<void> {
    this.#closed = true;
    const proc = this.#proc;
    if (!proc) return;
    proc.child.stdin.end();
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await proc.closed;
    clearTimeout(timer);
  }

  #start(): Process {
    const { command, functionsDir } = this.#options;
    const child = spawn(command, ['-u', '-B', join(pythonSourceDir(), 'stepforge_worker.py'), functionsDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...(this.#options.env ?? process.env), PYTHONIOENCODING: 'utf-8' },
      windowsHide: true,
    });
    let markClosed!: () => void;
    const proc: Process = { child, pending: new Map(), ready: false, lastStderr: '', closed: new Promise<void>((r) => (markClosed = r)) };
    // A write to a worker that has just died: the close below reports it, to the calls it concerns.
    child.stdin.on('error', () => undefined);
    child.on('error', (e: NodeJS.ErrnoException) => {
      proc.failure ??=
        e.code === 'ENOENT'
          ? new RuntimeError(
              'ConfigError',
              `cannot run Python user functions: '${command}' was not found on PATH; install Python 3.8 or later, or set STEPFORGE_PYTHON to the interpreter to use`,
              { details: { command } },
            )
          : new RuntimeError('FunctionError', `cannot start the Python worker '${command}': ${e.message}`, { details: { command } });
    });
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.#answer(proc, line));
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
      if (line.trim() !== '') proc.lastStderr = line.split(functionsDir).join('').slice(0, 300);
      this.#options.onStderr?.(line);
    });
    child.on('close', (code, signal) => {
      if (this.#proc === proc) this.#proc = undefined;
      for (const [, p] of proc.pending) p.reject(proc.failure ?? this.#exitError(proc, code, signal, p.module));
      proc.pending.clear();
      markClosed();
    });
    setRef(proc, false);
    return proc;
  }

  #answer(proc: Process, line: string): void {
    let msg: {
      id?: unknown;
      ready?: unknown;
      pid?: unknown;
      ok?: unknown;
      output?: unknown;
      error?: PythonCallError;
      stdout?: unknown;
      stderr?: unknown;
    };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      return;
    }
    if (msg.ready === true) {
      proc.ready = true;
      proc.pid = Number(msg.pid);
      return;
    }
    const p = typeof msg.id === 'number' ? proc.pending.get(msg.id) : undefined;
    if (!p) return;
    proc.pending.delete(msg.id as number);
    if (proc.pending.size === 0) setRef(proc, false);
    const out = { stdout: String(msg.stdout ?? ''), stderr: String(msg.stderr ?? ''), pid: proc.pid ?? -1 };
    p.resolve(msg.ok === true ? { ok: true, output: msg.output ?? null, ...out } : { ok: false, error: msg.error!, ...out });
  }

  #exitError(proc: Process, code: number | null, signal: NodeJS.Signals | null, module: string): RuntimeError {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const said = proc.lastStderr ? `; the last line it wrote to stderr: ${proc.lastStderr}` : '';
    return new RuntimeError(
      'FunctionError',
      proc.ready
        ? `the Python worker (pid ${proc.pid}) ${how} while ${module} was running${said}; the next call starts a new worker`
        : `the Python worker '${this.#options.command}' could not start: it ${how}${said}`,
      { details: { module, exitCode: code, signal } },
    );
  }
}

/** Keeps this process alive for the worker only while a call waits on it. */
function setRef(proc: Process, ref: boolean): void {
  for (const h of [proc.child, proc.child.stdin, proc.child.stdout, proc.child.stderr] as unknown as { ref?(): void; unref?(): void }[]) {
    if (ref) h.ref?.();
    else h.unref?.();
  }
}
