import type { StepforgeError } from '@stepforge/compiler';

// A part of the embedded stack that fails on its own, after it started and outside any request's
// promise (the dynalite worker thread dying on a damaged store), leaves nothing to await: the
// request in flight would wait for an answer that never comes. The command runner (main.ts)
// registers how to end the command then: print the named error and exit.

type StackFailureHandler = (e: StepforgeError) => void;
let handler: StackFailureHandler | undefined;

/** Sets what happens when the stack fails on its own; returns a function that removes it again. */
export function onStackFailure(h: StackFailureHandler): () => void {
  handler = h;
  return () => {
    if (handler === h) handler = undefined;
  };
}

/** Reports such a failure to the handler, or, with none (a library user), as an uncaught error. */
export function stackFailed(e: StepforgeError): void {
  if (handler) handler(e);
  else
    setImmediate(() => {
      throw e;
    });
}
