// Peephole folds over the lowered ASL (ASL in, ASL out): each removes a transition a run would
// otherwise make, where that is provably the same run. Lowering stays simple and these stay small.
import { asJsonata, replaceVariable } from '../jsonataText.js';
import type { AslState } from '../LowerContext.js';

/** The most definition bytes folding Start into a first Parallel may add (its Assign, repeated per branch). */
const FOLD_INTO_BRANCHES_MAX_BYTES = 8 * 1024;

/**
 * A scope's first Pass that only assigns variables (the run's Start, a Map iteration's item Pass) is
 * folded into the plain Lambda Task after it when nothing else enters that Task: the Task's fields
 * compute the values straight from its own input and its Assign stores them for the states after
 * it — one transition less per run / per iteration. Returns the state the scope now starts at.
 */
export function foldEntryPass(states: Record<string, AslState>, passName: string): string {
  const pass = assignOnlyPass(states, passName);
  if (pass === undefined) return passName;
  const nextName = pass.Next as string;
  const next = states[nextName];
  if (!isPlainLambdaTask(next) || referencesTo(states, nextName) !== 1) return passName;
  const assign = (pass.Assign as Record<string, unknown> | undefined) ?? {};
  inlineInto(next, assign, ['Arguments', 'Assign', 'Output']);
  next.Assign = { ...assign, ...(next.Assign as Record<string, unknown> | undefined) };
  delete states[passName];
  return nextName;
}

/**
 * The run's Start Pass folded into a first Parallel, when nothing else enters it: the Parallel's
 * Assign sets `input` and `run` from its own input once the branches are done (what the states after
 * it read), and each branch computes its own copies from the branch input, which is the execution
 * input, at its entry state — a Pass or a plain Lambda Task, entered once. Branch copies get fresh
 * names, because a branch may not assign a variable of the outer scope. One transition less per run
 * for workflows that start with parallel work (swarms, consensus). Returns the state the run starts at.
 */
export function foldStartIntoParallel(states: Record<string, AslState>, passName: string, freshVariable: (base: string) => string): string {
  const pass = assignOnlyPass(states, passName);
  if (pass === undefined) return passName;
  const parName = pass.Next as string;
  const par = states[parName];
  if (par === undefined || par.Type !== 'Parallel' || par.Arguments !== undefined || referencesTo(states, parName) !== 1) return passName;
  const assign = (pass.Assign as Record<string, unknown> | undefined) ?? {};
  const branches = par.Branches as { StartAt: string; States: Record<string, AslState> }[];
  const foldable = (b: { StartAt: string; States: Record<string, AslState> }): boolean => {
    const entry = b.States[b.StartAt];
    if (entry === undefined || referencesTo(b.States, b.StartAt) !== 0) return false;
    return entry.Type === 'Pass' ? entry.Output === undefined : isPlainLambdaTask(entry);
  };
  // Each branch repeats the input expression: on a wide fan-out one transition is not worth the bytes.
  if (branches.length * JSON.stringify(assign).length > FOLD_INTO_BRANCHES_MAX_BYTES || !branches.every(foldable)) return passName;
  for (const b of branches) {
    const locals: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(assign)) {
      if (!mentionsVariable(b.States, name)) continue;
      const local = freshVariable(name);
      renameVariable(b.States, name, `$${local}`);
      locals[local] = value;
    }
    const entry = b.States[b.StartAt]!;
    inlineInto(entry, locals, ['Arguments', 'Assign', 'Output']);
    // The entry reads its copies inline; only what later states of the branch read is assigned.
    const later = Object.entries(b.States)
      .filter(([n]) => n !== b.StartAt)
      .map(([, st]) => st);
    const kept = Object.fromEntries(Object.entries(locals).filter(([local]) => mentionsVariable(later, local)));
    if (Object.keys(kept).length > 0) entry.Assign = { ...kept, ...(entry.Assign as Record<string, unknown> | undefined) };
  }
  // The Parallel's own Output and Assign see the variables as they were before it: inline there too.
  inlineInto(par, assign, ['Output', 'Assign']);
  const after = Object.entries(states)
    .filter(([n]) => n !== passName && n !== parName)
    .map(([, st]) => st);
  const read = Object.fromEntries(Object.entries(assign).filter(([name]) => mentionsVariable(after, name)));
  if (Object.keys(read).length > 0) par.Assign = { ...read, ...(par.Assign as Record<string, unknown> | undefined) };
  delete states[passName];
  return parName;
}

/** The state `name` when it is a Pass that only assigns variables and goes on (what a fold can absorb). */
function assignOnlyPass(states: Readonly<Record<string, AslState>>, name: string): AslState | undefined {
  const pass = states[name];
  return pass !== undefined && pass.Type === 'Pass' && pass.Output === undefined && typeof pass.Next === 'string' ? pass : undefined;
}

/** A Lambda Task naming the function as its Resource (a callback Task's Arguments wrap the envelope; folds leave those alone). */
function isPlainLambdaTask(st: AslState | undefined): st is AslState {
  return st !== undefined && st.Type === 'Task' && !String(st.Resource).startsWith('arn:');
}

/** Inlines `assign`'s values into the given fields of `state` (see inlineVariables). */
function inlineInto(state: AslState, assign: Readonly<Record<string, unknown>>, fields: readonly string[]): void {
  for (const field of fields) if (state[field] !== undefined) state[field] = inlineVariables(state[field], assign);
}

/** `v` with every `$name` of `assign` in its JSONata strings replaced by the assigned value (a fold's inlining). */
function inlineVariables(v: unknown, assign: Readonly<Record<string, unknown>>): unknown {
  if (typeof v === 'string') {
    if (!v.startsWith('{%')) return v;
    let out = v;
    for (const [name, value] of Object.entries(assign)) out = replaceVariable(out, name, asJsonata(value));
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => inlineVariables(x, assign));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inlineVariables(x, assign)]));
  return v;
}

/** Replaces `$name` by `replacement` in every JSONata string under `node`, in place (nested branches and item processors too). */
function renameVariable(node: Record<string, unknown> | unknown[], name: string, replacement: string): void {
  const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((x, i) => [i, x]) : Object.entries(node);
  for (const [k, v] of entries) {
    if (typeof v === 'string') {
      if (v.startsWith('{%')) (node as Record<string | number, unknown>)[k] = replaceVariable(v, name, replacement);
    } else if (v !== null && typeof v === 'object') renameVariable(v as Record<string, unknown>, name, replacement);
  }
}

/** Whether any JSONata string under `node` reads `$name`. */
function mentionsVariable(node: unknown, name: string): boolean {
  if (typeof node === 'string') return node.startsWith('{%') && replaceVariable(node, name, '') !== node;
  if (Array.isArray(node)) return node.some((x) => mentionsVariable(x, name));
  if (node !== null && typeof node === 'object') return Object.values(node).some((x) => mentionsVariable(x, name));
  return false;
}

/** How many transitions in one scope lead to `name` (Next, Choice rules and Default, Catch). */
function referencesTo(states: Readonly<Record<string, AslState>>, name: string): number {
  let n = 0;
  for (const st of Object.values(states)) {
    if (st.Next === name) n++;
    if (st.Default === name) n++;
    for (const r of (st.Choices as Record<string, unknown>[] | undefined) ?? []) if (r.Next === name) n++;
    for (const c of (st.Catch as Record<string, unknown>[] | undefined) ?? []) if (c.Next === name) n++;
  }
  return n;
}
