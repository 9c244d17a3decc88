// Workflows written in code (Kortyx's defineWorkflow, the agent SDK's builders) in workflows/: each
// module is bundled and loaded at synth time, and every workflow it exports is compiled with its
// functions named as the function Lambda will find them: in the module's bundle under /var/task/code/.
// A Kortyx workflow file (`*.workflow.yaml|yml|json`) is the module the compiler makes of it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import {
  codeChildren,
  codeToIr,
  codeWorkflowExports,
  compileIr,
  KORTYX_WORKFLOW_FILE,
  kortyxFileModule,
  StepforgeError,
} from '@stepforge/compiler';
import type { WorkflowSpec } from './WorkflowSpec.js';
import { toWorkflowSpec } from './toWorkflowSpec.js';

/** Where the function Lambda finds the bundled workflow modules (its code root is /var/task). */
export const LAMBDA_CODE_DIR = '/var/task/code';

/** True for the module files the app deploys as code workflows. */
export function isCodeWorkflowFile(name: string): boolean {
  return /\.(m?[jt]s)$/.test(name) && !name.startsWith('.') && !name.endsWith('.d.ts');
}

/**
 * The bundle's file name in the function Lambda's code/ folder: the module's path from the
 * repository root with `__` for its separators (`workflows__triage.mjs`), so that two modules
 * of the same name in different folders never share one.
 */
export function codeBundleName(file: string): string {
  // A Kortyx workflow file keeps its extension: support.workflow.yaml and support.workflow.json may sit side by side.
  const stem = KORTYX_WORKFLOW_FILE.test(file) ? file : file.slice(0, file.length - extname(file).length);
  return `${stem
    .split(/[\\/]/)
    .filter((p) => p !== '' && p !== '..' && p !== '.')
    .join('__')}.mjs`;
}

/**
 * In a deployed bundle `stepforge` is the compiler's builders: a handler calls the module's functions
 * and never `.run()`, whose embedded stack would only weigh the Lambda down.
 */
export const CODE_BUNDLE_ALIAS = { stepforge: '@stepforge/compiler' } as const;

/**
 * Loads `source` (at `file`, relative to the repository root) and compiles each workflow it exports.
 * A module that cannot be bundled or loaded is `module_load_failed`; one that exports no workflow is
 * `invalid_document`.
 */
export function loadCodeWorkflows(source: string, file: string, generated?: string): WorkflowSpec[] {
  const location = { file, line: 1, column: 1 };
  const dir = mkdtempSync(join(tmpdir(), 'stepforge-code-'));
  let mod: Record<string, unknown>;
  try {
    // `generated`: the module made from a Kortyx workflow file, which stands in for the file.
    const entry =
      generated === undefined
        ? { entryPoints: [source] }
        : { stdin: { contents: generated, resolveDir: dirname(source), sourcefile: source, loader: 'js' as const } };
    // CommonJS, so that the synth (which is synchronous) can require it.
    const out = buildSync({
      ...entry,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      write: false,
      logLevel: 'silent',
      alias: { ...CODE_BUNDLE_ALIAS },
      external: ['@aws-sdk/*'],
    });
    const bundled = join(dir, 'module.cjs');
    writeFileSync(bundled, out.outputFiles[0]!.text);
    mod = createRequire(import.meta.url)(bundled) as Record<string, unknown>;
  } catch (e) {
    const first = (e as { errors?: { text: string }[] }).errors?.[0]?.text;
    throw new StepforgeError('module_load_failed', `cannot load the module ${file}: ${first ?? (e as Error).message}`, { location });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const exports = codeWorkflowExports(mod);
  if (exports.length === 0)
    throw new StepforgeError(
      'invalid_document',
      `${file} exports no workflow: export the result of defineWorkflow, workflow, parallel or stateGraph`,
      { location },
    );
  const bundle = codeBundleName(file);
  return exports.map((exportName) => {
    // With the module's exports, a useWorkflow child is found among them: it is deployed as its own state machine here too.
    const compiled = compileIr(codeToIr(mod[exportName], { module: `${LAMBDA_CODE_DIR}/${bundle}`, exportName, file, exports: mod }));
    const children = [...new Set(codeChildren(compiled.ir).map((c) => c.name))];
    return toWorkflowSpec(compiled, file, {
      codeModule: { source, bundle, ...(generated !== undefined ? { generated } : {}) },
      ...(children.length > 0 ? { childWorkflows: children } : {}),
    });
  });
}

/**
 * Loads a Kortyx workflow file (`*.workflow.yaml|yml|json`) as the module the compiler makes of it
 * (kortyxFileModule): its nodes' functions imported from the paths their `run` entries name,
 * resolved from the file's folder as Kortyx resolves them. The module's imports are made absolute,
 * so that the function Lambda's bundling can bundle it from a folder of its own. Errors as
 * `stepforge run` gives them: `invalid_yaml` / `invalid_json` at the parse error, `invalid_workflow`
 * naming the path, `module_load_failed` when a node's module cannot be loaded.
 */
export function loadKortyxWorkflowFile(source: string, file: string): WorkflowSpec[] {
  const text = readFileSync(source, 'utf8');
  const generated = kortyxFileModule(text, file, {
    resolveImport: (spec) => (spec.startsWith('./') || spec.startsWith('../') ? resolve(dirname(source), spec) : spec),
  });
  return loadCodeWorkflows(source, file, generated);
}
