// Kortyx's declarative workflow files (`*.workflow.yaml`, `*.workflow.yml`, `*.workflow.json`): the
// shape defineWorkflow takes, with each node's `run` a module path (`../nodes/chat.node.ts#chatNode`)
// resolved from the file's folder, as Kortyx's runtime resolves it. The file becomes the source of
// a small module that imports those functions and exports the workflow; the caller bundles that
// module like any workflow module, so the function handler imports the same code. Pure: text in,
// module source out.
import { parseDocument } from 'yaml';
import { StepforgeError } from '@stepforge/contract';
import { yamlErrorMessage } from '../source/yamlErrorMessage.js';
import { validateWorkflow } from './defineWorkflow.js';

/** The names Kortyx's file registry loads as declarative workflows. */
export const KORTYX_WORKFLOW_FILE = /\.workflow\.(ya?ml|json)$/i;

/** The export of the generated module that holds the workflow. */
export const KORTYX_FILE_EXPORT = 'workflow';

// Kortyx's schema is strict: anything else in the file is a mistake, not something to ignore.
const WORKFLOW_KEYS = new Set(['id', 'version', 'description', 'nodes', 'edges', 'metadata']);
const NODE_KEYS = new Set(['run', 'params', 'metadata', 'behavior']);
const BEHAVIOR_KEYS = new Set(['retry', 'onError', 'checkpoint']);

/**
 * Kortyx's test for a `run` string that names a module: `file:` URLs, `./` / `../` / `/` paths and
 * anything holding a `/`. Other strings are keys of Kortyx's in-process node registry.
 */
export function isModuleRef(run: string): boolean {
  return run.startsWith('file:') || run.startsWith('./') || run.startsWith('../') || run.startsWith('/') || run.includes('/');
}

/** Options of kortyxFileModule. */
export interface KortyxFileModuleOptions {
  /**
   * What the module imports for a node's module path (default: the path as written, resolved from
   * the file's folder by whoever bundles the module). The CDK app gives absolute paths, so that the
   * module bundles from wherever it is written.
   */
  readonly resolveImport?: (spec: string) => string;
}

/**
 * Parses a Kortyx workflow file (JSON when its text starts with `{` or `[`, else YAML, as Kortyx's
 * loadWorkflow decides) and returns the source of an ES module exporting it as `workflow`. A node's
 * `run` is `path[#export]`: the named export, or else the module's default export when it is a
 * function, or else its only exported function (Kortyx's rule, applied when the module loads).
 * Errors: `invalid_yaml` / `invalid_json` at the parse error, `invalid_workflow` naming the path
 * (a key Kortyx does not define, a registry key rather than a module path, a malformed graph).
 */
export function kortyxFileModule(text: string, file: string, options: KortyxFileModuleOptions = {}): string {
  const location = { file, line: 1, column: 1 };
  const trimmed = text.trim();
  let raw: unknown;
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new StepforgeError('invalid_json', `${file}: ${(e as Error).message}`, { location });
    }
  } else {
    const doc = parseDocument(text, { uniqueKeys: true });
    const first = doc.errors[0];
    if (first) {
      const [line, column] = first.linePos?.[0] ? [first.linePos[0].line, first.linePos[0].col] : [1, 1];
      throw new StepforgeError('invalid_yaml', yamlErrorMessage(first), { location: { file, line, column } });
    }
    raw = doc.toJS();
  }
  const bad = (path: string, message: string): never => {
    throw new StepforgeError('invalid_workflow', `${file}: ${path}: ${message}`, { location });
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    bad('(root)', 'a Kortyx workflow file holds one object: {id, version, nodes, edges}');
  const wf = raw as Record<string, unknown>;
  for (const k of Object.keys(wf)) {
    if (!WORKFLOW_KEYS.has(k)) {
      bad(
        k,
        k === 'inputSchema' || k === 'outputSchema'
          ? `${k} is a zod schema, which a YAML or JSON file cannot hold: define the workflow in a module (defineWorkflow) to give it one`
          : `unknown key (a Kortyx workflow has ${[...WORKFLOW_KEYS].join(', ')})`,
      );
    }
  }
  const nodes = wf.nodes !== null && typeof wf.nodes === 'object' && !Array.isArray(wf.nodes) ? (wf.nodes as Record<string, unknown>) : {};
  const imports: string[] = [];
  const modules = new Map<string, string>();
  const runs: Record<string, string> = {};
  for (const [name, def] of Object.entries(nodes)) {
    if (def === null || typeof def !== 'object' || Array.isArray(def)) continue;
    const n = def as Record<string, unknown>;
    for (const k of Object.keys(n))
      if (!NODE_KEYS.has(k)) bad(`nodes.${name}.${k}`, `unknown key (a node has ${[...NODE_KEYS].join(', ')})`);
    const behavior = n.behavior;
    if (behavior !== null && typeof behavior === 'object' && !Array.isArray(behavior)) {
      for (const k of Object.keys(behavior))
        if (!BEHAVIOR_KEYS.has(k))
          bad(`nodes.${name}.behavior.${k}`, `unknown key (a node's behavior has ${[...BEHAVIOR_KEYS].join(', ')})`);
    }
    if (typeof n.run !== 'string') {
      bad(`nodes.${name}.run`, 'run must be a module path with an optional #export, e.g. ./nodes/classify.ts#classifyNode');
      continue;
    }
    if (!isModuleRef(n.run)) {
      bad(
        `nodes.${name}.run`,
        `'${n.run}' is a key of Kortyx's in-process node registry (registerNode), which a workflow file run on Step Functions cannot reach: name the module instead, e.g. ./nodes/${n.run}.ts#${n.run}`,
      );
    }
    const hash = n.run.indexOf('#');
    const spec = hash < 0 ? n.run : n.run.slice(0, hash);
    const exportName = hash < 0 ? undefined : n.run.slice(hash + 1);
    if (spec === '' || exportName === '') bad(`nodes.${name}.run`, `'${n.run}' names no module or an empty export`);
    let id = modules.get(spec);
    if (id === undefined) {
      id = `m${modules.size}`;
      modules.set(spec, id);
      imports.push(`import * as ${id} from ${JSON.stringify(options.resolveImport ? options.resolveImport(spec) : spec)};`);
    }
    runs[name] = `__pick(${id}, ${JSON.stringify(exportName ?? null)}, ${JSON.stringify(name)}, ${JSON.stringify(n.run)})`;
  }
  // The shape as a whole (ids, edges, ends, retry numbers): the checks defineWorkflow runs.
  const checked = validateWorkflow(wf);
  if (!checked.ok) {
    const e = checked.errors[0]!;
    bad(e.path.join('.') || '(root)', e.message);
  }
  const nodeSource = Object.entries(nodes).map(([name, def]) => {
    const { run: _run, ...rest } = def as Record<string, unknown>;
    return `${JSON.stringify(name)}: { ...${JSON.stringify(rest)}, run: ${runs[name]} }`;
  });
  const { nodes: _nodes, ...top } = wf;
  return [
    `// Generated by stepforge from ${file.replace(/\n/g, ' ')}: the Kortyx workflow file as a module.`,
    ...imports,
    'function __pick(mod, exportName, node, ref) {',
    '  if (exportName !== null) {',
    '    if (typeof mod[exportName] === "function") return mod[exportName];',
    "    throw new Error(`node '${node}': run '${ref}': the module exports no function '${exportName}'`);",
    '  }',
    '  if (typeof mod.default === "function") return mod.default;',
    '  const fns = Object.keys(mod).filter((k) => typeof mod[k] === "function");',
    '  if (fns.length === 1) return mod[fns[0]];',
    '  throw new Error(`node \'${node}\': run \'${ref}\': the module must export a default function or exactly one named function (found: ${fns.sort().join(", ") || "none"}); name one with #export`);',
    '}',
    `const ${KORTYX_FILE_EXPORT} = { ...${JSON.stringify(top)}, nodes: { ${nodeSource.join(', ')} } };`,
    `Object.defineProperty(${KORTYX_FILE_EXPORT}, Symbol.for("stepforge.codeWorkflow"), { value: "kortyx", enumerable: false });`,
    `export { ${KORTYX_FILE_EXPORT} };`,
    '',
  ].join('\n');
}
