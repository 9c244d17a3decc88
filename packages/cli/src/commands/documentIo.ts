import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { formatDiagnostic, SourceText, StepforgeError, type Diagnostic } from '@stepforge/compiler';
import { EXIT_FAILURE, UsageError, type CliIo } from '../CliIo.js';
import { errnoReason } from '@stepforge/embedded/project';

/** Reads a document named on the command line (relative to the CLI's cwd); a missing file is an `io` error. */
export async function readDocumentFile(io: CliIo, file: string): Promise<string> {
  try {
    return await readFile(resolve(io.cwd, file), 'utf8');
  } catch (e) {
    throw new StepforgeError('io', `cannot read '${file}': ${errnoReason(e, { EISDIR: 'is a directory' })}`, {
      location: { file, line: 1, column: 1 },
    });
  }
}

/**
 * Prints every error: text mode writes each `error[class] FILE:LINE:COL: message` + caret excerpt to
 * stderr; --json writes `{"error": <first>, "errors": [<all>]}` to stdout. Returns exit code 1.
 */
export function reportErrors(io: CliIo, errors: readonly StepforgeError[], json: boolean): number {
  if (json) {
    io.out(JSON.stringify({ error: errors[0]!.toJSON(), errors: errors.map((e) => e.toJSON()) }) + '\n');
  } else {
    for (const e of errors) io.err(e.toString() + '\n');
  }
  return EXIT_FAILURE;
}

/** `warning[code] FILE:LINE:COL: message` with a caret excerpt, for stderr. */
export function formatWarning(w: Diagnostic, source: SourceText): string {
  return formatDiagnostic('warning', w.code, w.message, w.location, source);
}

/** Turns parseArgs' own complaints (unknown option, missing value) into usage errors (exit 2). */
export function usageFrom(e: unknown, usage: string): UsageError {
  const message = e instanceof Error ? e.message.replace(/\. To specify a positional argument.*$/s, '') : String(e);
  return new UsageError(`${message}\nUsage: stepforge ${usage}`);
}
