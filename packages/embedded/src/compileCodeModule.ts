import { pathToFileURL } from 'node:url';
import {
  codeToIr,
  codeWorkflowExports,
  compileIr,
  KORTYX_WORKFLOW_FILE,
  kortyxFileModule,
  kortyxEdgeWarnings,
  StepforgeError,
  type CompileResult,
  type IrDocument,
} from '@stepforge/compiler';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { importFile } from '@stepforge/runtime/importFile';
import { bundleCodeModule } from './bundleCodeModule.js';
import { invalidWorkflowError, isDefineWorkflowError } from './invalidWorkflowError.js';

/** A file the code front-end reads (a TypeScript or JavaScript module, or a Kortyx workflow file) rather than a document. */
export const CODE_MODULE = /\.(m?[jt]s|cjs)$|\.workflow\.(ya?ml|json)$/i;

/** A loaded workflow module: its exports, and the bundle they came from (what the function handler imports). */
export interface LoadedCodeModule {
  readonly mod: Readonly<Record<string, unknown>>;
  readonly bundle: string;
}

/**
 * Bundles (bundleCodeModule) and imports a module exporting workflows written in code. A module
 * that cannot be bundled or whose top level throws is `module_load_failed` at the file.
 */
export async function loadCodeModule(cwd: string, file: string): Promise<LoadedCodeModule> {
  // A Kortyx workflow file (YAML or JSON) is bundled as the module it stands for.
  const bundle = KORTYX_WORKFLOW_FILE.test(file)
    ? await bundleCodeModule(cwd, file, kortyxFileModule(readKortyxFile(cwd, file), file))
    : await bundleCodeModule(cwd, file);
  try {
    return { mod: await importFile(pathToFileURL(bundle).href), bundle };
  } catch (e) {
    // defineWorkflow refusing its definition at the module's top level: the definition is wrong, not the module.
    if (isDefineWorkflowError(e)) throw invalidWorkflowError(e, file, readSource(cwd, file));
    throw new StepforgeError('module_load_failed', `cannot load the module ${file}: ${(e as Error).message ?? String(e)}`, {
      location: { file, line: 1, column: 1 },
    });
  }
}

/**
 * The export `exportName` names among a module's workflows (the only one when it is absent);
 * several workflows and no `--export`, or none, are `invalid_document`.
 */
export function chooseCodeExport(mod: Readonly<Record<string, unknown>>, file: string, exportName?: string): string {
  const found = codeWorkflowExports(mod);
  const chosen = exportName ?? (found.length === 1 ? found[0] : undefined);
  if (chosen === undefined) {
    throw new StepforgeError(
      'invalid_document',
      found.length === 0
        ? `${file} exports no workflow: export the result of defineWorkflow, workflow, parallel or stateGraph`
        : `${file} exports several workflows (${found.join(', ')}): name one with --export NAME`,
      { location: { file, line: 1, column: 1 } },
    );
  }
  return chosen;
}

/**
 * Loads a module exporting workflows written in code and compiles the one `exportName` names.
 * The compiled workflow's nodes name the module's bundle, which the function handler imports.
 */
export async function compileCodeModule(
  cwd: string,
  file: string,
  exportName?: string,
  options: { express?: boolean } = {},
): Promise<CompileResult> {
  const ir = await codeModuleIr(cwd, file, exportName);
  return compileIr(ir, options, kortyxEdgeWarnings(ir));
}

/** The IR of a module's workflow (what compile lowers and graph draws). */
export async function codeModuleIr(cwd: string, file: string, exportName?: string): Promise<IrDocument> {
  const { mod, bundle } = await loadCodeModule(cwd, file);
  const chosen = chooseCodeExport(mod, file, exportName);
  return codeToIr(mod[chosen], { module: bundle, exportName: chosen, file, exports: mod });
}

/** A Kortyx workflow file's text; a missing one is `module_load_failed`, as a missing module is. */
function readKortyxFile(cwd: string, file: string): string {
  try {
    return readFileSync(resolve(cwd, file), 'utf8');
  } catch (e) {
    throw new StepforgeError(
      'module_load_failed',
      `cannot load the workflow file ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
      { location: { file, line: 1, column: 1 } },
    );
  }
}

/** A module's source text, for placing an error in it; undefined when it cannot be read. */
function readSource(cwd: string, file: string): string | undefined {
  try {
    return readFileSync(resolve(cwd, file), 'utf8');
  } catch {
    return undefined;
  }
}
