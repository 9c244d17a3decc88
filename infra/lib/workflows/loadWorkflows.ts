// Reads workflows/ at synth time: every *.chain.yaml (chain documents), *.yaml / *.yml (DSL
// documents) and *.json (Contenox task chains, or any of the others written as JSON) but the
// approval policy, compiled once each with the compiler's compileDocument, and every TypeScript or
// JavaScript module exporting workflows written in code (loadCodeWorkflows). What the stack needs
// beyond the ASL (Express, triggers, MCP servers, secrets by handler) comes from the compile
// result's manifest: documents are read by the compiler alone, which names every error at its place.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { KORTYX_WORKFLOW_FILE, duplicateWorkflowError, expressBlocker } from '@stepforge/compiler';
import { compilerCompileDocument, type CompileDocumentFn } from './compilerBinding.js';
import type { WorkflowSpec } from './WorkflowSpec.js';
import { toWorkflowSpec } from './toWorkflowSpec.js';
import { isCodeWorkflowFile, loadCodeWorkflows, loadKortyxWorkflowFile } from './loadCodeWorkflows.js';

/** Options for loadWorkflows. */
export interface LoadWorkflowsOptions {
  /** Paths in specs are made relative to this (the repository root). */
  readonly rootDir: string;
  /** Defaults to the compiler's compileDocument. */
  readonly compile?: CompileDocumentFn;
  /** Values of Contenox `{{var:NAME}}` macros (default: the synth's environment, as Contenox reads them). */
  readonly vars?: Readonly<Record<string, string | undefined>>;
}

/** The approval policy, which lives beside the workflows (see buildApp) and is no workflow. */
const POLICY_FILE = 'policy.json';

/** True for the file names the app deploys. */
export function isWorkflowFile(name: string): boolean {
  return /\.(ya?ml|json)$/.test(name) && !name.startsWith('.') && name !== POLICY_FILE;
}

/** Load and compile every workflow file in `dir`, sorted by file name; throws the first StepforgeError. */
export function loadWorkflows(dir: string, options: LoadWorkflowsOptions): WorkflowSpec[] {
  const compile = options.compile ?? compilerCompileDocument();
  const files = readdirSync(dir)
    .filter((f) => isWorkflowFile(f) || isCodeWorkflowFile(f))
    .sort();
  const vars = definedVars(options.vars ?? process.env);
  const texts: string[] = [];
  const specs: WorkflowSpec[] = [];
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const file = relative(options.rootDir, join(dir, f));
    // A module may export several workflows: one spec each, all from its one bundle.
    // A Kortyx workflow file is recognised by its name before it could be read as another format.
    const loaded = KORTYX_WORKFLOW_FILE.test(f)
      ? loadKortyxWorkflowFile(join(dir, f), file)
      : isCodeWorkflowFile(f)
        ? loadCodeWorkflows(join(dir, f), file)
        : [loadWorkflow(text, file, compile, vars)];
    for (const spec of loaded) {
      specs.push(spec);
      texts.push(text);
    }
  }
  // State machine names (and the construct ids and log groups made from them) are unique in a stack.
  const seen = new Map<string, number>();
  specs.forEach((s, i) => {
    const first = seen.get(s.name);
    if (first !== undefined) throw duplicateWorkflowError(specs[first]!, { ...s, source: texts[i]! });
    seen.set(s.name, i);
  });
  return specs;
}

function definedVars(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * Compile one workflow document and collect what the stack needs from it: the compiler reads the
 * document (whatever its format), decides Express as the document asks (`express: 'requested'`) and
 * hands the deployment settings over in the manifest, so nothing here reads the text. A Contenox
 * chain's `{{var:NAME}}` macros are filled from the synth's environment and one with neither a
 * value nor a default is refused (`unfilled_macro`, at the macro): a deployed chain cannot be given
 * `--var` later. The other formats have no macros, and ignore both options.
 */
export function loadWorkflow(
  text: string,
  file: string,
  compile: CompileDocumentFn,
  vars: Readonly<Record<string, string>> = {},
): WorkflowSpec {
  return toWorkflowSpec(compile(text, { file, vars, requireMacros: true, express: 'requested' }), file);
}

/** Why an ASL definition cannot run as an Express workflow (the compiler's rule, which `compile --express` also applies). */
export { expressBlocker };
