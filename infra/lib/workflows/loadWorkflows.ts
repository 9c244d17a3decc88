// Reads workflows/ at synth time: every *.chain.yaml (chain documents), *.yaml / *.yml (DSL
// documents) and *.json (Contenox task chains, or any of the others written as JSON) but the
// approval policy, compiled once each with the compiler's compileDocument, and every TypeScript or
// JavaScript module exporting workflows written in code (loadCodeWorkflows). Deployment-only keys
// (`express:`, `triggers:`) are read here from the same YAML, with positions for errors; a Contenox
// chain has none, and is left to the compiler alone.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isAlias, isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import {
  KORTYX_WORKFLOW_FILE, StepforgeError, aliasExpansionMessage, duplicateWorkflowError, expressBlocker, isEventPattern, loadDocument, MAX_ALIAS_COUNT,
  TRIGGER_DESCRIPTION_MAX, TRIGGER_FIELDS, TRIGGER_NAME, yamlErrorMessage, yamlValueIssues,
} from '@stepforge/compiler';
import { compilerCompileDocument, type CompileDocumentFn, type CompiledDocument } from './compilerBinding.js';
import { findPlaceholders, LAMBDA_PLACEHOLDERS, stepHandlerIdOf } from '@stepforge/contract';
import type { TriggerSpec, WorkflowSpec } from './WorkflowSpec.js';
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
  const files = readdirSync(dir).filter((f) => isWorkflowFile(f) || isCodeWorkflowFile(f)).sort();
  const vars = definedVars(options.vars ?? process.env);
  const texts: string[] = [];
  const specs: WorkflowSpec[] = [];
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const file = relative(options.rootDir, join(dir, f));
    // A module may export several workflows: one spec each, all from its one bundle.
    // A Kortyx workflow file is recognised by its name before it could be read as another format.
    const loaded = KORTYX_WORKFLOW_FILE.test(f) ? loadKortyxWorkflowFile(join(dir, f), file)
      : isCodeWorkflowFile(f) ? loadCodeWorkflows(join(dir, f), file) : [loadWorkflow(text, file, compile, vars)];
    for (const spec of loaded) { specs.push(spec); texts.push(text); }
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

/** Compile one workflow document and collect what the stack needs from it. */
export function loadWorkflow(text: string, file: string, compile: CompileDocumentFn, vars: Readonly<Record<string, string>> = {}): WorkflowSpec {
  // The compiler's own recognition: a Contenox chain is compiled as it is, never read as YAML here.
  if (loadDocument(text, { file }).format === 'contenox') return loadContenoxChain(text, file, compile, vars);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const root = doc.contents;
  const atOffset = (offset: number) => {
    const pos = lines.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
  const at = (node: Node | null | undefined) => atOffset(node?.range?.[0] ?? 0);
  const fail = (code: string, message: string, node: Node | null | undefined, hint?: string): never => {
    throw new StepforgeError(code, message, { location: at(node), source: text, hint });
  };
  const failAt = (message: string, offset: number): never => {
    throw new StepforgeError('invalid_document', message, { location: atOffset(offset), source: text });
  };
  // The deployment keys are read from this parse, before the compiler sees the text: YAML it cannot
  // read, and aliases or tags that would make reading them throw, are named here at their place.
  const yamlError = doc.errors[0];
  if (yamlError) failAt(`invalid YAML: ${yamlErrorMessage(yamlError)}`, yamlError.pos[0]);
  const values = yamlValueIssues(doc, text);
  const issue = values.issues[0];
  if (issue) failAt(issue.message, issue.offset);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    failAt(aliasExpansionMessage(e), values.firstAlias?.offset ?? 0);
  }
  if (!isMap(root)) fail('invalid_document', 'a workflow document must be a YAML mapping', root);
  const fields = data as Record<string, unknown>;
  const format: 'chain' | 'dsl' = doc.has('chain') ? 'chain' : 'dsl';

  const expressNode = doc.get('express', true) as Node | undefined;
  const wantsExpress = fields['express'] === true;
  if (expressNode !== undefined && typeof fields['express'] !== 'boolean') {
    fail('invalid_express', '`express` must be true or false', expressNode);
  }
  const resolved = (n: unknown): Node | undefined => (isAlias(n) ? (n.resolve(doc) as Node | undefined) : (n as Node | undefined));
  const triggers = readTriggers(resolved(doc.get('triggers', true)), fields['triggers'], resolved, fail);

  let compiled: CompiledDocument;
  let express = false;
  let expressFallbackReason: string | undefined;
  if (wantsExpress) {
    try {
      compiled = compile(text, { file, express: true });
      const blocker = expressBlocker(compiled.asl);
      if (blocker) {
        expressFallbackReason = blocker;
        compiled = compile(text, { file });
      } else {
        express = true;
      }
    } catch (e) {
      // The compiler refuses Express for workflows that exceed its limits (duration, history);
      // the same document still deploys as Standard, and the app reports why.
      if ((e as { name?: string }).name !== 'StepforgeError') throw e;
      expressFallbackReason = (e as Error).message;
      compiled = compile(text, { file });
    }
  } else {
    compiled = compile(text, { file });
  }

  return {
    name: compiled.name,
    displayName: compiled.displayName ?? compiled.name,
    ...(compiled.ir?.nameLocation !== undefined ? { nameLocation: compiled.ir.nameLocation } : {}),
    file,
    format,
    asl: compiled.asl,
    manifest: compiled.manifest,
    express,
    expressFallbackReason,
    triggers,
    secretsByHandler: secretsByHandler(text, compiled),
    bedrockModels: [...new Set([...text.matchAll(/\bbedrock:([A-Za-z0-9._:-]+)/g)].map((m) => m[1]!))].sort(),
    placeholders: findPlaceholders(compiled.asl),
    mcpServers: mcpServerDeclarations(fields['mcp_servers']),
  };
}

/**
 * A Contenox task chain: compiled with its `{{var:NAME}}` macros filled from the synth's environment,
 * and refused (`unfilled_macro`, at the macro) when one has neither a value nor a default — a
 * deployed chain cannot be given `--var` later. It has no deployment keys: Standard, no triggers.
 */
function loadContenoxChain(text: string, file: string, compile: CompileDocumentFn, vars: Readonly<Record<string, string>>): WorkflowSpec {
  const compiled = compile(text, { file, vars, requireMacros: true });
  const asl = JSON.stringify(compiled.asl);
  return {
    name: compiled.name,
    displayName: compiled.displayName ?? compiled.name,
    ...(compiled.ir?.nameLocation !== undefined ? { nameLocation: compiled.ir.nameLocation } : {}),
    file,
    format: 'contenox',
    asl: compiled.asl,
    manifest: compiled.manifest,
    express: false,
    triggers: [],
    secretsByHandler: secretsByHandler(text, compiled),
    // The model ids are the compiled ones (a chain names `provider` and `model` apart).
    bedrockModels: [...new Set([...asl.matchAll(/\bbedrock:([A-Za-z0-9._:-]+)/g)].map((m) => m[1]!))].sort(),
    placeholders: findPlaceholders(compiled.asl),
    mcpServers: {},
  };
}

/** The mapping-form `mcp_servers:` entries (the runtime's STEPFORGE_MCP_SERVERS); `res://` URIs are resolved elsewhere. */
function mcpServerDeclarations(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null && typeof v === 'object' && Object.keys(v as object).length > 0));
}

/** Why an ASL definition cannot run as an Express workflow (the compiler's rule, which `compile --express` also applies). */
export { expressBlocker };

/** `node` locates the triggers in the source; `data` is their value (aliases resolved). */
function readTriggers(
  node: Node | undefined,
  data: unknown,
  resolved: (n: unknown) => Node | undefined,
  fail: (code: string, message: string, node: Node | null | undefined, hint?: string) => never,
): TriggerSpec[] {
  if (node === undefined || node === null) return [];
  if (!isSeq(node)) return fail('invalid_trigger', '`triggers` must be a list', node, 'triggers:\n  - event_pattern: { source: ["my.app"] }');
  return node.items.map((entry, i) => {
    const item = resolved(entry);
    if (!isMap(item)) return fail('invalid_trigger', 'each trigger must be a mapping with `event_pattern`', item as Node);
    const value = (data as Record<string, unknown>[])[i]!;
    // The compiler's rules for a trigger (checks/triggers.ts), which `validate` applies too.
    for (const key of Object.keys(value)) {
      if (!(TRIGGER_FIELDS as readonly string[]).includes(key)) {
        fail('invalid_trigger', `unknown trigger field "${key}" (expected ${TRIGGER_FIELDS.join(', ')})`, item.get(key, true) as Node);
      }
    }
    const pattern = value['event_pattern'];
    if (!isEventPattern(pattern)) {
      return fail('invalid_trigger', '`event_pattern` must be a non-empty mapping (an EventBridge event pattern)', (item.get('event_pattern', true) as Node) ?? item);
    }
    const name = value['name'] ?? `trigger${i + 1}`;
    if (typeof name !== 'string' || !TRIGGER_NAME.test(name)) {
      return fail('invalid_trigger', 'trigger `name` must be 1-40 letters, digits, "-" or "_"', item.get('name', true) as Node);
    }
    const description = value['description'];
    if (description !== undefined && (typeof description !== 'string' || description.length > TRIGGER_DESCRIPTION_MAX)) {
      return fail('invalid_trigger', `trigger \`description\` must be text of at most ${TRIGGER_DESCRIPTION_MAX} characters`, item.get('description', true) as Node);
    }
    const bus = value['event_bus'];
    if (bus !== undefined && (typeof bus !== 'string' || bus.length === 0)) {
      return fail('invalid_trigger', '`event_bus` must be an event bus name', item.get('event_bus', true) as Node);
    }
    return {
      name, eventPattern: pattern, eventBus: bus === 'default' ? undefined : (bus as string | undefined),
      ...(description !== undefined ? { description: description as string } : {}),
    };
  });
}

/**
 * Secret ids per step handler. The manifest lists each step's handler and secrets; ids found only in the
 * source text (e.g. top-level `secrets:` bindings) go to every step handler the workflow uses, so a
 * handler can read exactly the secrets of the workflows it serves and nothing else.
 */
function secretsByHandler(text: string, compiled: CompiledDocument): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  const add = (handler: string, id: string) => (out[handler] ??= new Set()).add(id);
  const steps = (compiled.manifest as { steps?: unknown }).steps;
  const listed = new Set<string>();
  if (Array.isArray(steps)) {
    for (const step of steps as Record<string, unknown>[]) {
      const handler = stepHandlerIdOf(step['handler'] ?? step['kind']);
      const secrets = Array.isArray(step['secrets']) ? (step['secrets'] as unknown[]) : [];
      for (const s of secrets) {
        const id = typeof s === 'string' ? s.replace(/^\$secret:/, '') : undefined;
        if (id && handler) {
          add(handler, id);
          listed.add(id);
        }
      }
    }
  }
  const used = Object.entries(LAMBDA_PLACEHOLDERS)
    .filter(([p]) => JSON.stringify(compiled.asl).includes('${' + p + '}'))
    .map(([, h]) => h);
  for (const m of text.matchAll(/\$secret:([A-Za-z0-9/_+=.@-]+)/g)) {
    if (listed.has(m[1]!)) continue;
    for (const h of used) add(h, m[1]!);
  }
  return Object.fromEntries(Object.entries(out).map(([h, s]) => [h, [...s].sort()]));
}
