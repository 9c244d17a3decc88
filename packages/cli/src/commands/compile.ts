import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { compileDocument, duplicateWorkflowError, errorsOf, isStepforgeError, SourceText } from '@stepforge/compiler';
import { EXIT_OK, reportError, UsageError, type CliIo } from '../CliIo.js';
import { ensureDirectory, ioError, errnoReason, CODE_MODULE, compileCodeModule, workflowNameClash } from '@stepforge/embedded/project';
import { formatWarning, readDocumentFile, reportErrors } from './documentIo.js';
import { parseCommandArgs } from './parseCommandArgs.js';
import { userFunctionsFolder } from '../userFunctionsFolder.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.compile;

const HELP = `Usage: stepforge ${USAGE}

Compiles a chain or DSL document to an AWS Step Functions state machine (JSONata ASL) and
writes <name>.asl.json and <name>.manifest.json into DIR (default: the current directory); <name> is
the workflow name, an ASCII slug of a DSL document's display name (Document analysis -> Document-analysis).

Options:
  -o, --out DIR   where to write the files
  --explain       print the synchronisation edges added, the estimated slowdown and the quota figures
  --express       compile for an Express state machine (no 25,000-event history bound)
  --strict        unknown fields are errors
  --export NAME   FILE is a module exporting several workflows written in code: compile this one
  --json          print {"name","displayName","files","explain"} (or {"error":…,"errors":[…]}, every error of the document) on stdout

Exit status: 0 compiled, 1 invalid document or quota exceeded, 2 usage errors.
`;

/** `stepforge compile FILE`: writes `<name>.asl.json` and `<name>.manifest.json`. */
const compile: Command = {
  name: 'compile',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    let parsed;
    try {
      parsed = parseCommandArgs(
        argv,
        {
          out: { type: 'string', short: 'o' },
          explain: { type: 'boolean', default: false },
          express: { type: 'boolean', default: false },
          strict: { type: 'boolean', default: false },
          export: { type: 'string' },
          json: { type: 'boolean', default: false },
          help: { type: 'boolean', short: 'h', default: false },
        },
        USAGE,
      );
    } catch (e) {
      return reportError(io, e, argv.includes('--json'));
    }
    const { values, positionals } = parsed;
    if (values.help) {
      io.out(HELP);
      return EXIT_OK;
    }
    const json = values.json === true;
    if (positionals.length !== 1) return reportError(io, new UsageError(`expected exactly one FILE\nUsage: stepforge ${USAGE}`), json);
    const file = positionals[0]!;
    try {
      // A TypeScript or JavaScript module: its exported workflow, compiled by the code front-end.
      const code = CODE_MODULE.test(file);
      const text = code ? '' : await readDocumentFile(io, file);
      let result: ReturnType<typeof compileDocument>;
      try {
        result = code
          ? await compileCodeModule(io.cwd, file, values.export as string | undefined, { express: values.express })
          : compileDocument(text, { file, express: values.express, strict: values.strict, ...functionsOption(io) });
      } catch (e) {
        // The document's errors, every one of them, as validate prints them ({"error", "errors"} with --json).
        if (isStepforgeError(e)) return reportErrors(io, errorsOf(e), json);
        throw e;
      }
      const dir = resolve(io.cwd, values.out ?? '.');
      const hint = '-o names the directory the two files are written to: give one you can write to';
      ensureDirectory(dir, 'the output directory', hint);
      const aslFile = join(dir, `${result.name}.asl.json`);
      const manifestFile = join(dir, `${result.name}.manifest.json`);
      // Files another document of the project wrote there under the same workflow name are not replaced.
      const named = {
        name: result.name,
        displayName: result.displayName,
        file,
        source: text,
        ...(result.ir.nameLocation !== undefined ? { nameLocation: result.ir.nameLocation } : {}),
      };
      const clash = workflowNameClash(io.cwd, previousManifest(manifestFile), named);
      if (clash) throw duplicateWorkflowError(clash, named);
      for (const [out, value] of [
        [aslFile, result.asl],
        [manifestFile, result.manifest],
      ] as const) {
        try {
          await writeFile(out, JSON.stringify(value, null, 2) + '\n');
        } catch (e) {
          throw ioError(`cannot write ${out}: ${errnoReason(e, { EISDIR: 'a directory has that name' })}`, hint);
        }
      }
      if (!json) {
        // A module's warnings are excerpted from its own text (read only when there are some).
        const source = new SourceText(code && result.warnings.length > 0 ? await readDocumentFile(io, file) : text, file);
        for (const w of result.warnings) io.err(formatWarning(w, source) + '\n');
      }
      if (json) {
        io.out(
          JSON.stringify({
            name: result.name,
            displayName: result.displayName,
            files: [aslFile, manifestFile],
            explain: result.explain,
            warnings: result.warnings,
          }) + '\n',
        );
        return EXIT_OK;
      }
      io.out(`wrote ${aslFile}\nwrote ${manifestFile}\n`);
      if (values.explain) io.out(renderExplain(result.explain));
      return EXIT_OK;
    } catch (e) {
      return reportError(io, e, json);
    }
  },
};

function renderExplain(x: ReturnType<typeof compileDocument>['explain']): string {
  const lines = ['', 'explain:'];
  if (x.addedEdges.length === 0) lines.push('  synchronisation edges added: none (the graph is series-parallel)');
  else {
    lines.push(`  synchronisation edges added: ${x.addedEdges.length}`);
    for (const [a, b] of x.addedEdges) lines.push(`    ${a} -> ${b}`);
  }
  lines.push(`  estimated slowdown: ${x.estimatedSlowdown.toFixed(3)}x the critical path (unit step durations)`);
  for (const n of x.notes) lines.push(`  ${n}`);
  return lines.join('\n') + '\n';
}

export default compile;

/** The `file` and `displayName` a manifest already in the output directory records (empty when there is none). */
function previousManifest(path: string): { file?: string; displayName?: string } {
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as { file?: unknown; displayName?: unknown };
    return {
      ...(typeof m.file === 'string' ? { file: m.file } : {}),
      ...(typeof m.displayName === 'string' ? { displayName: m.displayName } : {}),
    };
  } catch {
    return {};
  }
}

/** The project's functions folder, when there is one, for the check of `function:` names. */
function functionsOption(io: CliIo): { functions?: NonNullable<ReturnType<typeof userFunctionsFolder>> } {
  const functions = userFunctionsFolder(io.cwd, io.env);
  return functions ? { functions } : {};
}
