// The compiler's compileDocument as infra calls it. Tests inject a hand-written stand-in through the
// same signature to exercise infra's own logic independently of the lowering.
import { compileDocument, type SourceLocation } from '@stepforge/compiler';
import type { StepManifest } from '@stepforge/contract';

/** What infra needs from a compile result (a subset of the compiler's CompileResult). */
export interface CompiledDocument {
  /** The workflow name: the state machine's (an ASCII slug of the display name). */
  readonly name: string;
  /** The name for people to read (the DSL's `document.name` as written); absent: `name`. */
  readonly displayName?: string;
  /** Where the document writes its name. */
  readonly ir?: { readonly nameLocation?: SourceLocation };
  readonly asl: Record<string, unknown>;
  /** The deployment facts (Express, triggers, MCP servers, secrets by handler) are read from here. */
  readonly manifest: StepManifest;
  readonly warnings: readonly { readonly message: string }[];
}

/** The compiler's `compileDocument(text, options)` signature as infra calls it. */
export type CompileDocumentFn = (
  text: string,
  options: {
    file?: string;
    express?: boolean | 'requested';
    strict?: boolean;
    vars?: Readonly<Record<string, string>>;
    requireMacros?: boolean;
  },
) => CompiledDocument;

/** The compiler's compileDocument. */
export function compilerCompileDocument(): CompileDocumentFn {
  return compileDocument;
}
