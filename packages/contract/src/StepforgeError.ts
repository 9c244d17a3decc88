import { SourceText } from './SourceText.js';

/** Where in a source file something is: 1-based line and column, plus optional length for the caret. */
export interface SourceLocation {
  readonly file?: string;
  readonly line: number;
  readonly column: number;
  readonly length?: number;
}

/** Options for a StepforgeError beyond its class and message. */
export interface StepforgeErrorOptions {
  readonly location?: SourceLocation;
  /** The full text the location points into; used to print the caret excerpt. */
  readonly source?: string | SourceText;
  readonly hint?: string;
  readonly cause?: unknown;
  /** Extra machine-readable detail (e.g. the cycle path, the suggestion). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * The one error type every user-facing failure uses. `code` is the machine-readable class
 * (`parse`, `unknown_handle`, `cycle`, …); match on it (or on `name`), never with instanceof,
 * because bundling can duplicate this class.
 */
export class StepforgeError extends Error {
  override readonly name = 'StepforgeError';
  readonly code: string;
  readonly location?: SourceLocation;
  readonly source?: SourceText;
  readonly hint?: string;
  readonly details?: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: StepforgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
    this.details = options.details;
    if (options.source !== undefined) {
      this.source = typeof options.source === 'string' ? new SourceText(options.source, options.location?.file) : options.source;
    }
  }

  /** `error[class] FILE:LINE:COL: message` followed by a caret excerpt when the source is known. */
  override toString(): string {
    return formatDiagnostic('error', this.code, this.message, this.location, this.source, this.hint);
  }

  /** The JSON shape of an error (inside `{"error": …}`), for `--json` and the HTTP API alike. */
  toJSON(): { class: string; message: string; line: number | null; column: number | null; file?: string; hint?: string } {
    return {
      class: this.code,
      message: this.message,
      line: this.location?.line ?? null,
      column: this.location?.column ?? null,
      ...(this.location?.file !== undefined ? { file: this.location.file } : {}),
      // What the text form prints as `= help:`, so a program reading --json can show the fix too.
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
    };
  }
}

/** True when `e` is a StepforgeError (by name, so duplicated bundles still match). */
export function isStepforgeError(e: unknown): e is StepforgeError {
  return (
    typeof e === 'object' &&
    e !== null &&
    (e as { name?: unknown }).name === 'StepforgeError' &&
    typeof (e as { code?: unknown }).code === 'string'
  );
}

/**
 * Every error `e` stands for: itself, then the ones a compile found after it (`details.moreErrors`,
 * which compileDocument fills when a document has several), so a command can print them all.
 */
export function errorsOf(e: StepforgeError): StepforgeError[] {
  const more = e.details?.moreErrors;
  return Array.isArray(more) ? [e, ...more.filter(isStepforgeError)] : [e];
}

/** A non-fatal finding (warnings such as unknown fields or unused tasks). */
export interface Diagnostic {
  readonly severity: 'error' | 'warning';
  readonly code: string;
  readonly message: string;
  readonly location?: SourceLocation;
}

/** Renders `severity[code] FILE:LINE:COL: message` plus a caret excerpt (graphql-js style). */
export function formatDiagnostic(
  severity: 'error' | 'warning',
  code: string,
  message: string,
  location?: SourceLocation,
  source?: SourceText,
  hint?: string,
): string {
  let where = '';
  if (location) where = `${location.file ?? source?.file ?? '<input>'}:${location.line}:${location.column}: `;
  else if (source?.file) where = `${source.file}: `;
  let out = `${severity}[${code}] ${where}${message}`;
  if (location && source) {
    const text = source.lineText(location.line);
    const gutter = String(location.line);
    const pad = ' '.repeat(gutter.length);
    const caretCount = Math.max(1, Math.min(location.length ?? 1, Math.max(1, text.length - location.column + 1)));
    out += `\n${pad} |\n${gutter} | ${text}\n${pad} | ${' '.repeat(Math.max(0, location.column - 1))}${'^'.repeat(caretCount)}`;
  }
  if (hint) out += `\n${' '.repeat(2)}= help: ${hint}`;
  return out;
}
