import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeToIr, codeWorkflowExports, compileIr, StepforgeError, type CompileResult } from '@stepforge/compiler';
import { importFile } from '@stepforge/functions/userfn/importFile';

/** A file the code front-end reads (a TypeScript or JavaScript module) rather than a document. */
export const CODE_MODULE = /\.(m?[jt]s|cjs)$/;

/**
 * Imports a module exporting workflows written in code and compiles the one `exportName` names
 * (the only one when it is absent). A module that cannot be imported is `module_load_failed`;
 * several workflows and no `--export`, or an export that is not one, are `invalid_document`.
 */
export async function compileCodeModule(cwd: string, file: string, exportName?: string, options: { express?: boolean } = {}): Promise<CompileResult> {
  const path = resolve(cwd, file);
  const location = { file, line: 1, column: 1 };
  let mod: Record<string, unknown>;
  try {
    mod = await importFile(pathToFileURL(path).href);
  } catch (e) {
    throw new StepforgeError('module_load_failed', `cannot load the module ${file}: ${(e as Error).message ?? String(e)}`, {
      location, hint: 'a TypeScript module needs a runtime that strips types (run under tsx) or compile it to JavaScript first',
    });
  }
  const found = codeWorkflowExports(mod);
  const chosen = exportName ?? (found.length === 1 ? found[0] : undefined);
  if (chosen === undefined) {
    throw new StepforgeError('invalid_document', found.length === 0
      ? `${file} exports no workflow: export the result of defineWorkflow, workflow, parallel or stateGraph`
      : `${file} exports several workflows (${found.join(', ')}): name one with --export NAME`, { location });
  }
  return compileIr(codeToIr(mod[chosen], { module: path, exportName: chosen, file }), options);
}
