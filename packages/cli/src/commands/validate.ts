import { parseCommandArgs } from './parseCommandArgs.js';
import {
  compileDocument,
  isStepforgeError,
  loadDocument,
  MISSING_VERSION,
  SourceText,
  StepforgeError,
  type Diagnostic,
} from '@stepforge/compiler';
import { EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { formatWarning, readDocumentFile, reportErrors, usageFrom } from './documentIo.js';
import type { Command } from './registry.js';
import { CODE_MODULE, compileCodeModule } from '@stepforge/embedded/project';
import { userFunctionsFolder } from '../userFunctionsFolder.js';
import { COMMAND_TEXT } from './commandText.js';

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.validate;

const HELP = `Usage: stepforge validate FILE [--json] [--strict] [--export NAME]

Runs every check on a chain or DSL document (parse, unknown_handle, cycle,
agentic_non_model, tier_limit, invalid_task, …, and the state machine's quotas: state_name,
history_limit, …, as compile does). Prints 'ok' and exits 0 when the
document is valid (warnings such as unused tasks go to stderr); otherwise prints each
error as 'error[class] FILE:LINE:COL: message' with a caret excerpt and exits 1.

Options:
  --json      machine-readable: {"ok":true,"format","warnings":[…]} or {"error":{class,message,line,column},"errors":[…]}
  --strict    unknown fields are errors, and so is every warning
  --export    a TypeScript/JavaScript module's workflow to check, when it exports several
              (a module is loaded and its workflow compiled, as compile does)

Exit status: 0 valid, 1 invalid, 2 usage errors.
`;

/** `stepforge validate FILE`: all checks, `ok` or located errors. */
const validate: Command = {
  name: 'validate',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const parsed = parseCommandArgs(
      argv,
      {
        json: { type: 'boolean', default: false },
        strict: { type: 'boolean', default: false },
        export: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      USAGE,
    );
    const { values, positionals } = parsed;
    if (values.help) {
      io.out(HELP);
      return EXIT_OK;
    }
    if (positionals.length !== 1) {
      throw new UsageError(
        `${positionals.length === 0 ? 'missing FILE' : `expected one FILE, got ${positionals.length}`}\nUsage: stepforge ${USAGE}`,
      );
    }
    const file = positionals[0]!;
    const json = values.json;
    if (CODE_MODULE.test(file)) {
      // A module: loading it and compiling its workflow are all the checks there are.
      let warnings: readonly Diagnostic[];
      try {
        warnings = (await compileCodeModule(io.cwd, file, values.export as string | undefined)).warnings;
      } catch (e) {
        if (!isStepforgeError(e)) throw e;
        return reportErrors(io, [e], json);
      }
      if (json) io.out(JSON.stringify({ ok: true, format: 'code', warnings: warnings.map(warningJson) }) + '\n');
      else {
        // Excerpts come from the module's own text, read only when there is a warning to show.
        if (warnings.length > 0) {
          const source = new SourceText(await readDocumentFile(io, file), file);
          for (const w of warnings) io.err(formatWarning(w, source) + '\n');
        }
        io.out('ok\n');
      }
      return EXIT_OK;
    }
    const text = await readDocumentFile(io, file);
    const functions = userFunctionsFolder(io.cwd, io.env);
    const result = loadDocument(text, { file, strict: values.strict, level: 'full', ...(functions ? { functions } : {}) });
    const source = new SourceText(text, file);
    const errors = [...result.errors];
    if (values.strict) {
      // --strict: a warning fails validation like an error, reported in the same shape.
      // Except a missing document.version: GraphN requires it, Stepforge does not, so it never fails a document.
      for (const w of result.warnings)
        if (w.code !== MISSING_VERSION)
          errors.push(new StepforgeError(w.code, w.message, { ...(w.location ? { location: w.location } : {}), source }));
    }
    if (errors.length === 0) {
      // The checks that need the state machine itself (state names, definition size, history and
      // payload quotas): a document that validates also compiles.
      try {
        compileDocument(text, { file, strict: values.strict, ...(functions ? { functions } : {}) });
      } catch (e) {
        if (!isStepforgeError(e)) throw e;
        errors.push(e);
      }
    }
    if (errors.length > 0) return reportErrors(io, errors, json);
    if (json) {
      io.out(
        JSON.stringify({
          ok: true,
          format: result.format,
          warnings: result.warnings.map(warningJson),
        }) + '\n',
      );
    } else {
      for (const w of result.warnings) io.err(formatWarning(w, source) + '\n');
      io.out('ok\n');
    }
    return EXIT_OK;
  },
};
export default validate;

/** A warning as `validate --json` lists it. */
function warningJson(w: Diagnostic): { class: string; message: string; line: number | null; column: number | null } {
  return { class: w.code, message: w.message, line: w.location?.line ?? null, column: w.location?.column ?? null };
}
