import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { StepforgeError, type IrWorkflow } from '@stepforge/compiler';
import type { FunctionsRuntime } from './functionsRuntime.js';

/** The approval policy a workflow's runs are held to, and where it came from. */
export interface ResolvedPolicy {
  /** Where the rules came from, in the order they are matched: `STEPFORGE_POLICY` or a file path. */
  readonly sources: readonly { readonly origin: string; readonly rules: number }[];
  readonly rules: readonly unknown[];
  /** The files looked for (found or not), for the message when none was found. */
  readonly searched: readonly string[];
}

/**
 * The project root of a folder: the nearest folder, from it upwards, that has a `workflows/` or
 * `.stepforge/` folder or a `package.json`. Undefined when no folder up to the file system's root has one.
 */
export function findProjectRoot(startDir: string): string | undefined {
  for (let dir = resolve(startDir); ; dir = dirname(dir)) {
    if (isDir(join(dir, 'workflows')) || isDir(join(dir, '.stepforge')) || existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The approval policy of a workflow: `STEPFORGE_POLICY` when set; otherwise the rules of
 * `policy.json` in the workflow file's folder, followed by those of the project's
 * `workflows/policy.json` (the project root as findProjectRoot finds it from that folder, which is
 * the policy the CDK stack deploys). It never depends on the folder the command runs in, except for
 * a document with no file (its folder is `baseDir`). A policy that cannot be read is `policy_invalid`.
 */
export function resolvePolicy(
  fr: Pick<FunctionsRuntime, 'readPolicyText' | 'readPolicyEnv'>,
  options: { readonly file?: string; readonly baseDir: string; readonly env: Readonly<Record<string, string | undefined>> },
): ResolvedPolicy {
  const fromEnv = options.env.STEPFORGE_POLICY;
  if (fromEnv) {
    // JSON text, or a path to a policy file (relative to the folder the command runs in).
    const rules = fr.readPolicyEnv(fromEnv, 'STEPFORGE_POLICY', options.baseDir);
    return { sources: [{ origin: 'STEPFORGE_POLICY', rules: rules.length }], rules, searched: [] };
  }
  const folder = options.file !== undefined ? dirname(resolve(options.baseDir, options.file)) : resolve(options.baseDir);
  const searched = [join(folder, 'policy.json')];
  const root = findProjectRoot(folder);
  if (root !== undefined && !searched.includes(join(root, 'workflows', 'policy.json')))
    searched.push(join(root, 'workflows', 'policy.json'));
  const sources: { origin: string; rules: number }[] = [];
  const rules: unknown[] = [];
  for (const file of searched) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new StepforgeError(
        'policy_invalid',
        `cannot read the approval policy ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        {
          location: { file, line: 1, column: 1 },
          hint: 'make it readable, or remove it; nothing ran',
        },
      );
    }
    const read = fr.readPolicyText(text, { file });
    sources.push({ origin: file, rules: read.length });
    rules.push(...read);
  }
  return { sources, rules, searched };
}

/**
 * The tools of a workflow that change things outside it, which an approval policy is there to
 * gate: `shell` and MCP tools (`mcp.<server>.<tool>`: Stepforge cannot know one to be read-only),
 * whether a tool step calls them or a model step is granted them. The read-only built-ins
 * (`http_fetch` is GET only, `web-search`, `fs-list`, `fs-read`) are not among them.
 */
export function gatedTools(workflow: IrWorkflow): { tool: string; step: string }[] {
  const out: { tool: string; step: string }[] = [];
  const gated = (t: string) => t === 'shell' || t.startsWith('mcp.');
  const visit = (wf: IrWorkflow): void => {
    for (const s of wf.steps) {
      const named = [...s.tools, ...(s.kind === 'tool' && typeof s.config.tool === 'string' ? [s.config.tool] : [])];
      const c = s.composite;
      for (const ref of [...(c?.analysts ?? []), c?.aggregator, c?.entry, ...(c?.specialists ?? []), c?.generator, c?.evaluator]) {
        const tools = ref?.agentConfig?.tools;
        if (Array.isArray(tools)) named.push(...tools.filter((t): t is string => typeof t === 'string'));
      }
      for (const t of new Set(named)) if (gated(t)) out.push({ tool: t, step: s.id });
      if (c?.body) visit(c.body);
    }
  };
  visit(workflow);
  return out;
}

/** Refuses a workflow with gated tools and no policy at all: its gated calls would run unasked. */
export function requirePolicyFor(
  workflow: string,
  tools: readonly { tool: string; step: string }[],
  policy: ResolvedPolicy,
  file?: string,
): void {
  if (tools.length === 0 || policy.sources.length > 0) return;
  const uses = tools.map((t) => `${t.tool} (step ${t.step})`).join(', ');
  throw new StepforgeError(
    'policy_missing',
    `workflow '${workflow}' uses ${uses}, which can change things outside the run, but no approval policy was found (looked for ${policy.searched.join(', ')}); without one every such call would run unasked`,
    {
      ...(file !== undefined ? { location: { file, line: 1, column: 1 } } : {}),
      hint: `add ${policy.searched[0] ?? 'a policy.json next to the workflow'}, e.g. [{"tool":"shell","action":"approve"}] ([] allows every granted call), or set STEPFORGE_POLICY`,
      details: { tools },
    },
  );
}

/** One line saying which policy is in force, for the start of a run. */
export function describePolicy(policy: Pick<ResolvedPolicy, 'sources'>, cwd: string): string {
  if (policy.sources.length === 0) return 'policy: none (no policy.json found; every granted tool call is allowed)';
  const shown = (o: string) => (o === 'STEPFORGE_POLICY' ? o : relative(cwd, o).startsWith('..') ? o : relative(cwd, o));
  return `policy: ${policy.sources.map((s) => `${shown(s.origin)} (${s.rules} rule${s.rules === 1 ? '' : 's'})`).join(', then ')}`;
}
