import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

/** Where the console output of one user function call goes. */
export type ConsoleSink = (stream: 'stdout' | 'stderr', text: string) => void;

const current = new AsyncLocalStorage<ConsoleSink>();
let installed = false;
/** True while a sink runs: what it writes itself (the logger's line) goes out as it is, not back into it. */
let inSink = false;

function deliver(sink: ConsoleSink, stream: 'stdout' | 'stderr', text: string): void {
  inSink = true;
  try {
    sink(stream, text);
  } finally {
    inSink = false;
  }
}

const METHODS = [
  ['log', 'stdout'],
  ['info', 'stdout'],
  ['debug', 'stdout'],
  ['warn', 'stderr'],
  ['error', 'stderr'],
  ['trace', 'stderr'],
] as const;

/**
 * Routes what `console.*` (or a direct `process.stdout.write` / `process.stderr.write`) prints inside a call (and the promises it starts) to that call's sink,
 * as print() inside a Python function goes to its call: the step logs it through the redacting
 * logger instead of it reaching the terminal or the Lambda log as written, secrets and all. Output
 * of no call in particular (this process's own) is printed as before. Work the call started that
 * prints after it has ended still reaches its sink (see runFunctionStep, which logs it at once).
 */
export async function captureConsole<T>(sink: ConsoleSink, run: () => T | Promise<T>): Promise<T> {
  if (!installed) {
    installed = true;
    for (const [method, stream] of METHODS) {
      const original = console[method].bind(console);
      console[method] = (...args: unknown[]) => {
        const to = inSink ? undefined : current.getStore();
        if (to) deliver(to, stream, method === 'trace' ? `Trace: ${format(...args)}` : format(...args));
        else original(...args);
      };
    }
    for (const [name, stream] of [
      ['stdout', process.stdout],
      ['stderr', process.stderr],
    ] as const) {
      const original = stream.write.bind(stream) as (...a: unknown[]) => boolean;
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        const to = inSink ? undefined : current.getStore();
        if (!to) return original(chunk, ...rest);
        deliver(
          to,
          name,
          typeof chunk === 'string'
            ? chunk.replace(/\n$/, '')
            : Buffer.from(chunk as Uint8Array)
                .toString('utf8')
                .replace(/\n$/, ''),
        );
        const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        done?.();
        return true;
      }) as typeof stream.write;
    }
  }
  return await current.run(sink, run);
}
