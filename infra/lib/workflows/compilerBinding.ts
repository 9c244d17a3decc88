// The one place infra touches the compiler's `compileDocument` (DESIGN contract, owned by the lowering
// engineer). Resolved from the module namespace so infra type-checks and its tests can run against a
// hand-written ASL fixture while the lowering lands in parallel.
import * as compiler from '@stepforge/compiler';

/** A diagnostic as the compiler reports warnings. */
export interface CompileWarning {
  readonly code?: string;
  readonly message: string;
}

/** What `compileDocument` returns (DESIGN: compile entry point). */
export interface CompiledDocument {
  readonly name: string;
  readonly asl: Record<string, unknown>;
  readonly manifest: Record<string, unknown>;
  readonly explain?: { readonly addedEdges: readonly (readonly [string, string])[]; readonly estimatedSlowdown: number; readonly notes: readonly string[] };
  readonly warnings: readonly CompileWarning[];
}

/** The compiler's `compileDocument(text, options)` signature as infra calls it. */
export type CompileDocumentFn = (
  text: string,
  options: { file?: string; express?: boolean; strict?: boolean },
) => CompiledDocument;

/** The compiler's compileDocument, or undefined when this checkout's compiler does not export it yet. */
export function compilerCompileDocument(): CompileDocumentFn | undefined {
  const fn = (compiler as unknown as Record<string, unknown>)['compileDocument'];
  return typeof fn === 'function' ? (fn as CompileDocumentFn) : undefined;
}
