// IR → ASL (JSONata + Assign). Each step becomes a fragment of states with an entry and "tails"
// (the Next fields still to fill); a sequence patches tails to the next entry, a Parallel lowers each
// branch into its own scope and copies the branch outputs into fresh variables, because an inner scope
// can read but never write the outer scope's variables.
import { StepforgeError, ENVELOPE_VERSION, ITERATION_INLINE_OUTPUT_MAX_BYTES, kindPlaceholder, RUN_META_KEY, type LambdaStepKind } from '@stepforge/contract';
import { hasExpression, parseTemplate } from '../expr/parseTemplate.js';
import { templateToJsonata } from '../expr/templateToJsonata.js';
import { jsonataHelperBindings, withJsonataHelpers } from '../expr/jsonataHelpers.js';
import type { PathRoot, Template } from '../expr/ExpressionAst.js';
import type { IrAgentRef, IrCodeChild, IrControl, IrDocument, IrExpr, IrRetry, IrRoute, IrSdkAgent, IrSdkFlow, IrSdkStep, IrStep, IrWorkflow } from '../ir/Ir.js';
import { CONTENOX_FIRST_INPUT } from '../ir/contenoxToIr.js';
import { scheduleDag } from '../ir/scheduleDag.js';
import { stepIdentity } from '../ir/stepIdentity.js';
import { LayeredMap } from './LayeredMap.js';
import { NameAllocator, asciiOnly, MAX_STATE_NAME } from './NameAllocator.js';
import { routesOnItsAgents, stateReadSteps } from './stateReadSteps.js';
import { renderRetry } from './renderRetry.js';
import { analystKeys } from '../ir/analystKeys.js';

/** One ASL state, as plain JSON. */
export type AslState = Record<string, unknown>;

/** The lowered state machine plus what the manifest and `--explain` need. */
export interface LoweredWorkflow {
  readonly definition: Record<string, unknown>;
  /** Step → the state names it became (first = the step's own state). */
  readonly stepStates: ReadonlyMap<IrStep, readonly string[]>;
  /** Parent step of each nested step. */
  readonly parents: ReadonlyMap<IrStep, IrStep>;
  /** Ordering edges added to make each DAG series-parallel (step ids). */
  readonly addedEdges: readonly (readonly [string, string])[];
  /** Makespan ÷ critical path with unit durations (1 = nothing lost). */
  readonly estimatedSlowdown: number;
  /** Steps whose output the state machine reads itself (their envelopes say `readByStateMachine`). */
  readonly stateReads: ReadonlySet<string>;
}

/** The execution's first and last states. */
export const START_STATE = 'Start';
export const OUTPUT_STATE = 'Output';
/** Error names the compiled ASL raises itself. */
export const BUDGET_EXCEEDED = 'BudgetExceeded';
/** The error the model handler raises when a consensus judge's answer is not a candidate verbatim. */
export const JUDGE_NOT_CANDIDATE = 'JudgeChoiceNotCandidate';

/**
 * Plain Lambda steps name the function itself as the Resource (`${ModelStepFunctionArn}`, filled by
 * DefinitionSubstitutions): the state's result is then the handler's answer, with no Invoke envelope
 * (`FunctionName`, `Payload`) in the definition or the result — about 70 bytes less per Task, which
 * is what keeps a 1,000-step workflow well under the 1 MB definition quota.
 */
const LAMBDA_INVOKE_CALLBACK_BASE = 'arn:aws:states:::lambda:invoke';
/**
 * How a Lambda step's result becomes its value: `output`, which handlers set to `{"$ref": outputRef}`
 * when the output is stored by reference (see StepResult).
 */
const RESULT_VALUE = '$states.result.output';
/** The envelope's `attempt`: which try of its state this call is (see StepEnvelope.attempt). */
const ATTEMPT = '{% $states.context.State.RetryCount %}';
/**
 * Tool calls invoke the tool Lambda with `.waitForTaskToken`: a call that policy gates waits for a
 * human (the runtime records the approval, announces it on SQS and answers the token when someone
 * decides); any other call is answered through the token at once. The result is then the answer
 * itself, as for a function-ARN Task.
 */
const LAMBDA_INVOKE_CALLBACK = `${LAMBDA_INVOKE_CALLBACK_BASE}.waitForTaskToken`;
/** The most definition bytes folding Start into a first Parallel may add (its Assign, repeated per branch). */
const FOLD_INTO_BRANCHES_MAX_BYTES = 8 * 1024;
/** How long a gated tool call may wait: a little over the runtime's default approval timeout (24 h), whose expiry denies first. */
const CALLBACK_TIMEOUT_SECONDS = 24 * 3600 + 300;

interface Tail {
  readonly holder: Record<string, unknown>;
  /** `Next`: a normal state (may End); `rule`: a Choice rule; `Default`: a Choice's default. */
  readonly field: 'Next' | 'rule' | 'Default';
  /** The agent loop step whose exit this is (its "done" rule): a Pass that only closes it belongs to that step. */
  readonly loop?: IrStep;
}

interface Frag {
  readonly entry: string;
  readonly tails: Tail[];
  /**
   * Constant variables to set on the way in (loop counters). Every state that leads here assigns
   * them itself, which saves an init Pass (one transition per entry); where nothing can (a
   * branch's StartAt, a Choice's Default), `materialize` adds that Pass and returns its name.
   */
  readonly init?: { readonly assign: Record<string, unknown>; readonly materialize: () => string };
}

/** A workflow's execution order: each step's position, each control node's range of positions. */
interface Layout {
  readonly position: Map<string, number>;
  readonly ranges: Map<IrControl, readonly [number, number]>;
  /** Step id → the smallest and largest position of its readers (±Infinity when one is outside the workflow). */
  readonly spans: Map<string, ReaderSpan>;
}

interface ReaderSpan {
  readonly min: number;
  readonly max: number;
}

interface Scope {
  readonly label: string;
  readonly states: Record<string, AslState>;
  /** Step id → JSONata reading its value here (`$var`, or a lookup into a Parallel's result variable). */
  readonly env: LayeredMap<string>;
  /** JSONata yielding the workflow input in this scope. */
  readonly inputVar: string;
  readonly iterVars: readonly string[];
  /** Inside a `for_each` iteration (at any depth): Lambda steps get the iteration's smaller inline output limit. */
  readonly inMap?: boolean;
  /** Variables assigned in this scope with the step values they hold (what a branch may export). */
  readonly produced: { readonly variable: string; readonly steps: readonly string[] }[];
  failState?: string;
  /** The state machine's own scope (its Fail state is `Failed`). */
  readonly top?: boolean;
}

/** Lowers a whole IR document to an ASL definition. Throws StepforgeError on what ASL cannot express. */
export function lowerWorkflow(doc: IrDocument, options: { express?: boolean } = {}): LoweredWorkflow {
  return new Lowerer(doc, options).run();
}

class Lowerer {
  private readonly names = new NameAllocator();
  private readonly stepNames = new Map<IrStep, string>();
  private readonly stepStates = new Map<IrStep, string[]>();
  private readonly parents = new Map<IrStep, IrStep>();
  private readonly addedEdges: [string, string][] = [];
  private slowdown = 1;
  private stateReads: ReadonlySet<string> = new Set();

  constructor(private readonly doc: IrDocument, private readonly options: { express?: boolean }) {}

  run(): LoweredWorkflow {
    this.reserveStepNames(this.doc.workflow, undefined);
    this.collectReaders(this.doc.workflow);
    // What the front-end parsed already (the same parse of the same text) is not parsed again.
    for (const t of this.doc.templates ?? []) this.templates.set(t.text, t);
    this.stateReads = stateReadSteps(this.doc.workflow, (t) => this.parse(t));
    this.names.claimState(START_STATE) || this.fail('state_name', `a step is named '${START_STATE}'`, undefined);
    const outputName = this.names.state(OUTPUT_STATE);
    const top: Scope = {
      label: this.doc.name, top: true, states: {}, env: new LayeredMap<string>(), inputVar: '$input', iterVars: [], produced: [],
    };
    const body = this.lowerWorkflowBody(this.doc.workflow, top, true);
    const result = this.resultExpr(this.doc.workflow, top);
    const defaults = JSON.stringify(this.doc.inputDefaults ?? {});
    const meta = `$states.input.\`${RUN_META_KEY}\``;
    top.states[START_STATE] = {
      Type: 'Pass',
      Comment: `Run of '${this.doc.displayName ?? this.doc.name}': input (with defaults) and run metadata into variables`,
      Assign: {
        input: `{% ( $i := $type($states.input) = "object" ? $sift($states.input, function($v, $k) { $k != "${RUN_META_KEY}" }) : {}; $merge([${defaults}, $exists($i) ? $i : {}]) ) %}`,
        // One leaf per field: the context read stays a plain path.
        run: {
          id: '{% $states.context.Execution.Name %}',
          workflow: this.doc.name,
          idempotencyKey: `{% ( $k := ${meta}.idempotencyKey; $exists($k) ? $k : null ) %}`,
          parentRunId: `{% ( $p := ${meta}.parentRunId; $exists($p) ? $p : null ) %}`,
        },
      },
    };
    const start = top.states[START_STATE]!;
    if (this.routedInit) Object.assign(start.Assign as Record<string, unknown>, this.routedInit);
    const outputComment = this.doc.workflow.output ? 'The workflow result (output:)' : 'The workflow result: the last step\'s output';
    if (body) {
      this.connect([{ holder: start, field: 'Next' }], body);
      // The last states build the result themselves (Output + End): no separate Output Pass to enter,
      // unless a Choice ends the run or a large result would be repeated in several terminals.
      const join = body.tails.some((t) => t.field !== 'Next') || (body.tails.length > 1 && result.length > 512);
      if (join) {
        top.states[outputName] = { Type: 'Pass', Comment: outputComment, Output: `{% ${result} %}`, End: true };
        // Only an agent loop's exit leads here: this Pass is there because a Choice cannot end the run.
        const loop = loopClosedBy(body.tails);
        if (loop !== undefined) this.stepStates.get(loop)!.push(outputName);
        this.patch(body.tails, outputName);
      } else this.closeScope(body, top, (assigns) => valueOf(result, assigns));
    } else {
      start.Next = outputName;
      top.states[outputName] = { Type: 'Pass', Comment: outputComment, Output: `{% ${result} %}`, End: true };
    }
    let startAt = body && !body.init ? this.foldEntryPass(top.states, START_STATE) : START_STATE;
    if (startAt === START_STATE && body && !body.init) startAt = this.foldStartIntoParallel(top.states, START_STATE);
    const ordered: Record<string, AslState> = { [startAt]: top.states[startAt]! };
    // Fail states last, so the definition reads top to bottom in execution order.
    for (const [k, v] of Object.entries(top.states)) if (k !== startAt && v.Type !== 'Fail') ordered[k] = v;
    for (const [k, v] of Object.entries(top.states)) if (v.Type === 'Fail') ordered[k] = v;
    const definition: Record<string, unknown> = {
      // The name a person gave the workflow; the state machine itself is named by its slug.
      Comment: `${this.doc.displayName ?? this.doc.name} — compiled by Stepforge from ${this.doc.file ?? `a ${this.doc.format} document`}`,
      QueryLanguage: 'JSONata',
      StartAt: startAt,
      States: ordered,
    };
    // Init Passes exist only where something needed them: list the states each step really has.
    const emitted = new Set<string>();
    const collect = (states: Record<string, AslState>): void => {
      for (const k of Object.keys(states)) {
        emitted.add(k);
        const st = states[k]!;
        for (const b of (st.Branches as { States: Record<string, AslState> }[] | undefined) ?? []) collect(b.States);
        const proc = st.ItemProcessor as { States: Record<string, AslState> } | undefined;
        if (proc) collect(proc.States);
      }
    };
    collect(ordered);
    for (const [step, names] of this.stepStates) this.stepStates.set(step, names.filter((n) => emitted.has(n)));
    return {
      definition,
      stepStates: this.stepStates,
      parents: this.parents,
      addedEdges: this.addedEdges,
      estimatedSlowdown: this.slowdown,
      stateReads: this.stateReads,
    };
  }

  /**
   * A scope's first Pass that only assigns variables (the run's Start, a Map iteration's item Pass) is
   * folded into the plain Lambda Task after it when nothing else enters that Task: the Task's fields
   * compute the values straight from its own input and its Assign stores them for the states after
   * it — one transition less per run / per iteration. Returns the state the scope now starts at.
   */
  private foldEntryPass(states: Record<string, AslState>, passName: string): string {
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
  private foldStartIntoParallel(states: Record<string, AslState>, passName: string): string {
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
        const local = this.names.variable(name);
        renameVariable(b.States, name, `$${local}`);
        locals[local] = value;
      }
      const entry = b.States[b.StartAt]!;
      inlineInto(entry, locals, ['Arguments', 'Assign', 'Output']);
      // The entry reads its copies inline; only what later states of the branch read is assigned.
      const later = Object.entries(b.States).filter(([n]) => n !== b.StartAt).map(([, st]) => st);
      const kept = Object.fromEntries(Object.entries(locals).filter(([local]) => mentionsVariable(later, local)));
      if (Object.keys(kept).length > 0) entry.Assign = { ...kept, ...(entry.Assign as Record<string, unknown> | undefined) };
    }
    // The Parallel's own Output and Assign see the variables as they were before it: inline there too.
    inlineInto(par, assign, ['Output', 'Assign']);
    const after = Object.entries(states).filter(([n]) => n !== passName && n !== parName).map(([, st]) => st);
    const read = Object.fromEntries(Object.entries(assign).filter(([name]) => mentionsVariable(after, name)));
    if (Object.keys(read).length > 0) par.Assign = { ...read, ...(par.Assign as Record<string, unknown> | undefined) };
    delete states[passName];
    return parName;
  }

  /** Step id → ids of the steps that read it; plus steps every scope end must see (results, output reads). */
  private readonly readers = new Map<string, Set<string>>();
  private readonly alwaysExport = new Set<string>();

  private collectReaders(wf: IrWorkflow, owner?: string): void {
    const result = wf.steps[wf.resultStep ?? wf.steps.length - 1];
    if (result) this.alwaysExport.add(result.id);
    for (const r of wf.output?.reads ?? []) this.alwaysExport.add(r);
    for (const step of wf.steps) {
      // A read from inside a loop body counts as a read by the loop step itself (what runs in the outer scope).
      for (const id of [step.id, ...(owner ? [owner] : [])]) {
        for (const r of allReads(step)) {
          if (!this.readers.has(r)) this.readers.set(r, new Set());
          this.readers.get(r)!.add(id);
        }
      }
      if (step.composite?.body) this.collectReaders(step.composite.body, owner ?? step.id);
    }
  }

  /** Whether a step's value must leave the Parallel branch `branch` of `wf`: a reader is outside it. */
  private mustExport(stepId: string, wf: IrWorkflow, branch: IrControl): boolean {
    if (this.alwaysExport.has(stepId)) return true;
    const layout = this.layouts.get(wf)!;
    const [lo, hi] = layout.ranges.get(branch)!;
    const span = this.readerSpan(layout, stepId);
    return span.min < lo || span.max >= hi;
  }

  /**
   * Where each control node's steps sit in its workflow's execution order: a branch covers one
   * contiguous range, so "is this reader inside the branch" is two comparisons, not a set per branch;
   * and "is every reader inside" compares the range with the readers' span.
   */
  private readonly layouts = new Map<IrWorkflow, Layout>();

  /** The positions of a step's readers in a workflow (computed once per step; a step is asked once per enclosing branch). */
  private readerSpan(layout: Layout, stepId: string): ReaderSpan {
    let span = layout.spans.get(stepId);
    if (span !== undefined) return span;
    let min = Infinity;
    let max = -Infinity;
    for (const reader of this.readers.get(stepId) ?? []) {
      const at = layout.position.get(reader);
      if (at === undefined) {
        // A reader outside this workflow is outside every branch of it.
        min = -Infinity;
        max = Infinity;
        break;
      }
      if (at < min) min = at;
      if (at > max) max = at;
    }
    layout.spans.set(stepId, (span = { min, max }));
    return span;
  }

  private layout(wf: IrWorkflow, control: IrControl): void {
    const position = new Map<string, number>();
    const ranges = new Map<IrControl, readonly [number, number]>();
    let next = 0;
    const place = (step: IrStep, at: number): void => {
      position.set(step.id, at);
      for (const inner of step.composite?.body?.steps ?? []) place(inner, at);
    };
    const visit = (c: IrControl): void => {
      const lo = next;
      if (c.type === 'step') place(wf.steps[c.step]!, next++);
      else for (const child of c.type === 'sequence' ? c.items : c.branches) visit(child);
      ranges.set(c, [lo, next]);
    };
    visit(control);
    this.layouts.set(wf, { position, ranges, spans: new Map() });
  }

  // ---- names -------------------------------------------------------------------------------

  /** Claims every step's own state name up front, so helper states never take a source name. */
  private reserveStepNames(wf: IrWorkflow, parent: IrStep | undefined): void {
    for (const step of wf.steps) {
      if (parent) this.parents.set(step, parent);
      if (/[^\x20-\x7e]/.test(step.id)) {
        this.fail('state_name', `step '${step.id}' has a name with non-ASCII characters; Step Functions state names must be ASCII`, step,
          'rename the step using ASCII letters, digits, spaces, "-" or "_"');
      }
      let name = step.id;
      if (this.names.hasState(name) && parent) name = `${this.stepNames.get(parent) ?? parent.id}/${step.id}`;
      if (name.length > MAX_STATE_NAME) {
        this.fail('state_name', `step '${step.id}' gives a state name of ${name.length} characters; Step Functions allows at most ${MAX_STATE_NAME}`, step,
          'shorten the step name');
      }
      if (!this.names.claimState(name)) {
        this.fail('state_name', `step '${step.id}' gives the state name '${name}' twice; state names must be unique in a state machine`, step,
          'give nested steps distinct names');
      }
      this.stepNames.set(step, name);
      this.stepStates.set(step, [name]);
      const body = step.composite?.body;
      if (body) this.reserveStepNames(body, step);
    }
  }

  private helper(step: IrStep, suffix: string): string {
    const base = this.stepNames.get(step)!;
    const room = MAX_STATE_NAME - suffix.length - 2;
    const name = this.names.state(`${base.length > room ? base.slice(0, room) : base}: ${suffix}`);
    this.stepStates.get(step)!.push(name);
    return name;
  }

  private fail(code: string, message: string, step: IrStep | undefined, hint?: string): never {
    throw new StepforgeError(code, message, {
      location: step?.location ?? (this.doc.file ? { file: this.doc.file, line: 1, column: 1 } : undefined),
      source: this.doc.source,
      hint,
      details: step ? { step: step.id } : undefined,
    });
  }

  // ---- structure ---------------------------------------------------------------------------

  /** Schedules a workflow's DAG and lowers it into `scope`; returns undefined for an empty body. */
  private lowerWorkflowBody(wf: IrWorkflow, scope: Scope, top: boolean): Frag | undefined {
    if (wf.steps.length === 0) return undefined;
    if (wf.routes) return this.lowerRouted(wf, wf.routes, scope);
    // Pushed one by one: `map` makes a holey array until it is optimised and a packed one after, and
    // the scheduler's optimised code was thrown away when the kind changed under it.
    const durations: number[] = [];
    for (const s of wf.steps) durations.push(s.estimatedDuration ?? 1);
    const schedule = scheduleDag(wf.steps.length, wf.edges, durations);
    for (const [a, b] of schedule.addedEdges) this.addedEdges.push([wf.steps[a]!.id, wf.steps[b]!.id]);
    if (top) this.slowdown = schedule.criticalPath === 0 ? 1 : schedule.makespan / schedule.criticalPath;
    this.layout(wf, schedule.control);
    return this.lowerControl(schedule.control, wf, scope);
  }

  /** Variables a routed workflow starts with (its first `$prev`, every step's output, the edge counters). */
  private routedInit?: Record<string, unknown>;

  /**
   * A routed workflow (see IrWorkflow.routes): each step, then a Choice state whose rules are the
   * step's branches in order, so the execution view shows the route taken. A rule that is taken sets
   * `$prev` (what the next step reads) and counts the transition when an `edge_traversed_at_least`
   * branch asks about it; the counters are variables, so a bounded cycle ends inside the state machine.
   */
  private lowerRouted(wf: IrWorkflow, routes: readonly IrRoute[], scope: Scope): Frag {
    const vars = wf.steps.map((s) => this.names.stepVariable(s.id));
    wf.steps.forEach((s, i) => scope.env.set(s.id, `$${vars[i]}`));
    const counters = new Map<string, string>();
    for (const r of routes) for (const b of r.branches) if (b.edge) counters.set(`${b.edge[0]}>${b.edge[1]}`, `edge${b.edge[0]}to${b.edge[1]}`);
    const init: Record<string, unknown> = { prev: `{% ${CONTENOX_FIRST_INPUT} %}` };
    for (const v of vars) init[v] = null;
    for (const c of counters.values()) init[c] = 0;
    // A model step that hands its tool calls over keeps its conversation's counters in variables
    // the step that runs the calls advances (see lowerHandedOverTurn / lowerHandedOverCalls).
    const turns = new Map<string, TurnVariables>();
    wf.steps.forEach((s, i) => {
      if (!s.handsOverToolCalls) return;
      const t: TurnVariables = {
        turn: this.names.variable(`${vars[i]}_turn`), calls: this.names.variable(`${vars[i]}_calls`),
        results: this.names.variable(`${vars[i]}_results`), reply: this.names.variable(`${vars[i]}_reply`),
      };
      turns.set(s.id, t);
      Object.assign(init, { [t.turn]: 0, [t.calls]: 0, [t.results]: [], [t.reply]: null });
    });
    this.routedInit = init;
    const frags = wf.steps.map((s, i) => {
      if (s.handsOverToolCalls) return this.lowerHandedOverTurn(s, scope, vars[i]!, turns.get(s.id)!);
      const of = s.runsToolCallsOf !== undefined ? wf.steps.find((x) => x.id === s.runsToolCallsOf) : undefined;
      if (of !== undefined) return this.lowerHandedOverCalls(s, scope, vars[i]!, of, turns.get(of.id)!);
      return this.lowerStep(s, scope, vars[i]);
    });
    const entries = frags.map((f) => this.entryOf(f));
    const endTails: Tail[] = [];
    wf.steps.forEach((step, i) => {
      const route = routes[i]!;
      const v = `$${vars[i]}`;
      if (route.onFailure !== undefined) {
        for (const name of this.stepStates.get(step) ?? []) {
          const st = scope.states[name];
          if (st?.Catch) st.Catch = [{ ErrorEquals: ['States.ALL'], Assign: { prev: '{% $states.errorOutput %}' }, Next: entries[route.onFailure]! }];
        }
      }
      if (route.raise !== undefined) {
        const name = this.helper(step, 'raise_error');
        scope.states[name] = { Type: 'Fail', Comment: this.comment(step, 'raise_error ends the run failed'), Error: route.raise, Cause: `{% $string(${v}) %}` };
        this.patch(frags[i]!.tails, name);
        return;
      }
      const out = route.output ? this.valueJsonata(route.output, scope, step) : v;
      const evaluated = route.ignoreCase ? `$lowercase(${route.evaluate})` : route.evaluate;
      // A turn that hands its calls over is routed on the model's reply (were tools asked for?).
      const bind = `$out := ${step.handsOverToolCalls ? `$${turns.get(step.id)!.reply}` : v}; $e := ${evaluated}`;
      // No branches: the chain ends after the step.
      const branches = route.branches.length > 0 ? route.branches : [{ operator: 'default' as const, when: '', goto: 'end' as const }];
      const rules = branches.map((b: IrRoute['branches'][number]) => {
        const w = JSON.stringify(route.ignoreCase && b.operator !== 'edge_traversed_at_least' ? b.when.toLowerCase() : b.when);
        let cond: string;
        switch (b.operator) {
          case 'equals': cond = `$e = ${w}`; break;
          case 'contains': cond = `$contains($e, ${w})`; break;
          case 'starts_with': cond = `$substring($e, 0, $length(${w})) = ${w}`; break;
          case 'ends_with': cond = `$length($e) >= $length(${w}) and $substring($e, $length($e) - $length(${w})) = ${w}`; break;
          case 'edge_traversed_at_least': cond = `$${counters.get(`${b.edge![0]}>${b.edge![1]}`)!} >= ${Number(b.when)}`; break;
          default: cond = 'true';
        }
        const assign: Record<string, unknown> = { prev: `{% ${out} %}` };
        const counted = b.goto === 'end' ? undefined : counters.get(`${i}>${b.goto}`);
        if (counted !== undefined) assign[counted] = `{% $${counted} + 1 %}`;
        const rule: Record<string, unknown> = { Condition: b.operator === 'default' || b.operator === 'edge_traversed_at_least' ? `{% ${cond} %}` : `{% ( ${bind}; ${cond} ) %}`, Assign: assign };
        if (b.goto === 'end') endTails.push({ holder: rule, field: 'rule' });
        else rule.Next = entries[b.goto]!;
        return rule;
      });
      const name = this.helper(step, 'route');
      scope.states[name] = { Type: 'Choice', Comment: this.comment(step, 'transition: the first branch that matches, in order'), Choices: rules };
      this.patch(frags[i]!.tails, name);
    });
    // Tasks no transition reaches never run: their states would be unreachable, which Step Functions refuses.
    const reached = new Set<number>([0]);
    for (const todo = [0]; todo.length > 0;) {
      const r = routes[todo.pop()!]!;
      for (const next of [...r.branches.map((b) => b.goto), r.onFailure]) {
        if (typeof next === 'number' && !reached.has(next)) { reached.add(next); todo.push(next); }
      }
    }
    wf.steps.forEach((step, i) => {
      if (reached.has(i)) return;
      for (const name of this.stepStates.get(step) ?? []) delete scope.states[name];
      this.stepStates.set(step, []);
    });
    // Every failure may have gone to an on_failure task: then no state leads to the Fail state.
    const fail = scope.failState;
    if (fail !== undefined && routes.some((r) => r.onFailure !== undefined) && !JSON.stringify(scope.states).includes(`"Next":${JSON.stringify(fail)}`)) {
      delete scope.states[fail];
      scope.failState = undefined;
    }
    return { entry: entries[0]!, tails: endTails };
  }

  private lowerControl(c: IrControl, wf: IrWorkflow, scope: Scope): Frag | undefined {
    switch (c.type) {
      case 'step':
        return this.lowerStep(wf.steps[c.step]!, scope);
      case 'sequence': {
        let first: Frag | undefined;
        let tails: Tail[] = [];
        for (const item of c.items) {
          const f = this.lowerControl(item, wf, scope);
          if (!f) continue;
          if (first === undefined) first = f;
          else this.connect(tails, f);
          tails = f.tails;
        }
        return first === undefined ? undefined : { entry: first.entry, tails, init: first.init };
      }
      case 'parallel':
        return this.lowerParallel(c.branches, wf, scope);
    }
  }

  private lowerParallel(branches: readonly IrControl[], wf: IrWorkflow, scope: Scope): Frag {
    const label = `[${branches.map((b) => this.controlLabel(b, wf)).join(' & ')}]`;
    const name = this.names.state(label.length > 70 ? `[${this.controlLabel(branches[0]!, wf)} & ${branches.length - 1} more]` : label);
    const rendered: Record<string, unknown>[] = [];
    // One variable receives the whole Parallel result; steps are read from it by branch and key.
    const result = this.names.variable(`par_${asciiOnly(this.controlLabel(branches[0]!, wf)).replace(/[^A-Za-z0-9_]/g, '')}`);
    const newEnv: [string, string][] = [];
    const carried: string[] = [];
    branches.forEach((branch, i) => {
      const inner: Scope = {
        // Named after the branch's first steps: its Fail / join states read "<branch>: failed".
        label: this.controlLabel(branch, wf), states: {}, env: scope.env.child(),
        inputVar: scope.inputVar, iterVars: scope.iterVars, inMap: scope.inMap, produced: [],
      };
      const frag = this.lowerControl(branch, wf, inner)!;
      // Only values read after the Parallel (or results) leave the branch: keeps definitions small.
      const exports = inner.produced.filter((p) => p.steps.some((id) => this.mustExport(id, wf, branch)));
      this.closeScope(frag, inner, (assigns) => `{${exports.map((p) => `${JSON.stringify(p.variable)}: ${valueOf(`$${p.variable}`, assigns)}`).join(', ')}}`);
      rendered.push({ StartAt: this.entryOf(frag), States: inner.states });
      for (const p of exports) {
        const outer = `$lookup($${result}[${i}], ${JSON.stringify(p.variable)})`;
        for (const stepId of p.steps) {
          const innerExpr = inner.env.get(stepId);
          if (innerExpr === undefined) continue;
          newEnv.push([stepId, replaceVariable(innerExpr, p.variable, outer)]);
          carried.push(stepId);
        }
      }
    });
    const state: AslState = { Type: 'Parallel', Comment: `Runs ${branches.length} branches at once`, Branches: rendered };
    if (carried.length > 0) state.Assign = { [result]: '{% $states.result %}' };
    scope.states[name] = state;
    for (const [stepId, expr] of newEnv) scope.env.set(stepId, expr);
    if (carried.length > 0) scope.produced.push({ variable: result, steps: carried });
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /** Labels by control node: a Parallel asks for each branch's label several times, and for its nested Parallels' again. */
  private readonly labels = new Map<IrControl, string>();

  private controlLabel(c: IrControl, wf: IrWorkflow): string {
    let label = this.labels.get(c);
    if (label !== undefined) return label;
    if (c.type === 'step') label = asciiOnly(wf.steps[c.step]!.id);
    else if (c.type === 'sequence') label = c.items.length === 1 ? this.controlLabel(c.items[0]!, wf) : `${this.controlLabel(c.items[0]!, wf)} > ...`;
    else label = `[${c.branches.map((b) => this.controlLabel(b, wf)).join(' & ')}]`;
    this.labels.set(c, label);
    return label;
  }

  /** Leads `tails` into `frag`, each tail assigning the fragment's init variables itself when it can. */
  private connect(tails: readonly Tail[], frag: Frag): void {
    const init = frag.init;
    if (init === undefined) return this.patch(tails, frag.entry);
    const clash = (t: Tail) => t.field === 'Default' || Object.keys(init.assign).some((k) => k in ((t.holder.Assign as object | undefined) ?? {}));
    if (tails.some(clash)) return this.patch(tails, init.materialize());
    for (const t of tails) t.holder.Assign = { ...((t.holder.Assign as Record<string, unknown> | undefined) ?? {}), ...init.assign };
    this.patch(tails, frag.entry);
  }

  /** The state to start a fragment at when nothing leads into it (its init Pass, if it has init variables). */
  private entryOf(frag: Frag): string {
    return frag.init ? frag.init.materialize() : frag.entry;
  }

  /** An init Pass created on demand (see Frag.init); the same one each time. */
  private initPass(scope: Scope, name: () => string, comment: string, assign: () => Record<string, unknown>, next: string): () => string {
    let made: string | undefined;
    return () => {
      if (made === undefined) {
        made = name();
        scope.states[made] = { Type: 'Pass', Comment: comment, Assign: assign(), Next: next };
      }
      return made;
    };
  }

  /** Fills tails with `next`. */
  private patch(tails: readonly Tail[], next: string): void {
    for (const t of tails) {
      if (t.field === 'Default') t.holder.Default = next;
      else t.holder.Next = next;
    }
  }

  /**
   * Ends a branch / iteration scope: Choice tails go to a closing Pass; every terminal state gets
   * `End` and an `Output` built by `output(assignsOfThatState)`.
   */
  private closeScope(frag: Frag, scope: Scope, output: (assigns: Record<string, unknown>) => string): void {
    const terminals: Record<string, unknown>[] = [];
    const choiceTails = frag.tails.filter((t) => t.field !== 'Next');
    if (choiceTails.length > 0) {
      const end = this.names.state(`${scope.label}: end`);
      // A Choice cannot end a branch: an agent loop that ends one needs this Pass, which is then its own state.
      const loop = loopClosedBy(choiceTails);
      if (loop !== undefined) this.stepStates.get(loop)!.push(end);
      const pass: AslState = { Type: 'Pass', Comment: loop !== undefined ? this.comment(loop, 'the agent loop is done; ends the branch with its output') : 'Joins the paths of this branch' };
      scope.states[end] = pass;
      this.patch(choiceTails, end);
      terminals.push(pass);
    }
    for (const t of frag.tails) if (t.field === 'Next') terminals.push(t.holder);
    for (const s of terminals) {
      delete s.Next;
      s.End = true;
      s.Output = `{% ${output((s.Assign as Record<string, unknown> | undefined) ?? {})} %}`;
    }
  }

  private failState(scope: Scope): string {
    if (scope.failState === undefined) {
      const name = this.names.state(scope.top ? 'Failed' : `${scope.label}: failed`);
      const fail: AslState = { Type: 'Fail' };
      if (scope.top) fail.Comment = 'The run ends failed with the failing step\'s error; the cause names the step';
      fail.Error = '{% $states.input[1].Error %}';
      fail.Cause = '{% "step \'" & $states.input[0] & "\' failed: " & $states.input[1].Cause %}';
      scope.states[name] = fail;
      scope.failState = name;
    }
    return scope.failState;
  }

  // ---- expressions -------------------------------------------------------------------------

  private resolveRoot(scope: Scope, step?: IrStep): (root: PathRoot) => string {
    return (root) => {
      if (root.kind === 'input') return scope.inputVar;
      const v = scope.env.get(root.step);
      if (v === undefined) {
        this.fail('unknown_step', `step '${root.step}' is not available here${step ? ` (read by '${step.id}')` : ''}`, step,
          'a step can read steps that run before it in its own body or in an enclosing scope');
      }
      return v;
    };
  }

  /** A template string → JSONata (no `{% %}`), or a JSON literal when it holds no expression. */
  private templateJsonata(text: string, scope: Scope, mode: 'value' | 'condition', step?: IrStep): string {
    if (!hasExpression(text)) return mode === 'condition' ? String(text !== '') : JSON.stringify(text);
    return templateToJsonata(this.parse(text), { resolveRoot: this.resolveRoot(scope, step), mode, objectInput: true });
  }

  /** Parsed templates: a step's input is parsed for its value and again to see whether it may be null. */
  private readonly templates = new Map<string, Template>();

  private parse(text: string): Template {
    let t = this.templates.get(text);
    if (t === undefined) this.templates.set(text, (t = parseTemplate(text)));
    return t;
  }

  /** An IrExpr as an ASL field value: static JSON stays as is, expressions become `{% … %}` leaves. */
  private field(e: IrExpr | undefined, scope: Scope, step?: IrStep): unknown {
    if (e === undefined) return undefined;
    if (e.kind === 'jsonata') return `{% ${this.jsonataExpr(e, scope)} %}`;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return hasExpression(v) ? `{% ${this.templateJsonata(v, scope, 'value', step)} %}` : v;
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) out[k] = walk(x);
        return out;
      }
      return v;
    };
    return walk(e.value);
  }

  /** An IrExpr as one JSONata expression (for Assign / Items / conditions). */
  private valueJsonata(e: IrExpr, scope: Scope, step?: IrStep): string {
    if (e.kind === 'jsonata') return this.jsonataExpr(e, scope);
    const walk = (v: unknown): string => {
      if (typeof v === 'string') return this.templateJsonata(v, scope, 'value', step);
      if (Array.isArray(v)) return `[${v.map(walk).join(', ')}]`;
      if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${walk(x)}`).join(', ')}}`;
      return JSON.stringify(v ?? null);
    };
    return walk(e.value);
  }

  private conditionJsonata(e: IrExpr | undefined, scope: Scope, step?: IrStep): string {
    if (e === undefined) return 'true';
    if (e.kind === 'jsonata') return withJsonataHelpers(`$sfTruthy(${this.jsonataExpr(e, scope)})`);
    if (typeof e.value === 'string') return this.templateJsonata(e.value, scope, 'condition', step);
    return withJsonataHelpers(`$sfTruthy(${this.valueJsonata(e, scope, step)})`);
  }

  /** Raw JSONata (chain `pure`): `$` is the parents' outputs by handle, `$input` the workflow input. */
  private jsonataExpr(e: Extract<IrExpr, { kind: 'jsonata' }>, scope: Scope): string {
    const parents = e.reads.map((r) => `${JSON.stringify(r)}: ${this.resolveRoot(scope)({ kind: 'step', step: r })}`).join(', ');
    const bindInput = scope.inputVar === '$input' ? '' : `$input := ${scope.inputVar}; `;
    return `( ${bindInput}{${parents}}.( ${e.jsonata} ) )`;
  }

  private readsObject(reads: readonly string[], scope: Scope): unknown {
    const seen = [...new Set(reads)];
    if (seen.length === 0) return {};
    return `{% {${seen.map((r) => `${JSON.stringify(r)}: ${this.resolveRoot(scope)({ kind: 'step', step: r })}`).join(', ')}} %}`;
  }

  private resultExpr(wf: IrWorkflow, scope: Scope): string {
    // A routed workflow's result is what its last step passed on.
    if (wf.routes) return '$prev';
    if (wf.output) return this.valueJsonata(wf.output, scope);
    const idx = wf.resultStep ?? wf.steps.length - 1;
    const step = wf.steps[idx];
    if (!step) return 'null';
    return this.resolveRoot(scope)({ kind: 'step', step: step.id });
  }

  // ---- steps -------------------------------------------------------------------------------

  private lowerStep(step: IrStep, scope: Scope, v = this.names.stepVariable(step.id)): Frag {
    let frag: Frag;
    switch (step.kind) {
      case 'pure':
        frag = this.lowerPass(step, scope, v, step.expr ? this.valueJsonata(step.expr, scope, step) : 'null', 'Pure transform (JSONata, no Lambda)');
        break;
      case 'conditional':
        frag = this.lowerPass(step, scope, v, this.conditionJsonata(step.composite?.condition, scope, step), 'Condition evaluated in JSONata (no Lambda)');
        if (step.composite?.body) frag = this.lowerBranches(step, scope, v, frag);
        break;
      case 'for_each':
        frag = this.lowerForEach(step, scope, v);
        break;
      case 'while':
        frag = this.lowerWhile(step, scope, v);
        break;
      case 'judge_loop':
        frag = this.lowerJudgeLoop(step, scope, v);
        break;
      case 'parallel_analyzer':
        frag = this.lowerAnalyzer(step, scope, v);
        break;
      case 'handoff_router':
        frag = this.lowerHandoff(step, scope, v);
        break;
      case 'code_graph':
        frag = this.lowerCodeGraph(step, scope, v);
        break;
      case 'model':
      case 'agent':
        frag = step.tools.length > 0 ? this.lowerAgentLoop(step, scope, v) : this.lowerTask(step, scope, v);
        break;
      default:
        frag = this.lowerTask(step, scope, v);
    }
    if (step.chooseFrom && step.chooseFrom.length > 0) frag = this.checkVerbatim(step, scope, frag);
    if (step.when) frag = this.guard(step, scope, v, frag);
    scope.env.set(step.id, `$${v}`);
    scope.produced.push({ variable: v, steps: [step.id] });
    return frag;
  }

  /** `<kind> '<id>' @ file:line:col[: what]` — repeated on every state, so kept short. */
  private comment(step: IrStep, what?: string): string {
    const loc = step.location ? ` @ ${step.location.file ?? this.doc.file ?? 'source'}:${step.location.line}:${step.location.column}` : '';
    return `${step.kind} '${step.id}'${loc}${what ? `: ${what}` : ''}`;
  }

  private lowerPass(step: IrStep, scope: Scope, v: string, jsonata: string, what: string): Frag {
    const name = this.stepNames.get(step)!;
    const state: AslState = { Type: 'Pass', Comment: this.comment(step, what), Assign: { [v]: `{% ${jsonata} %}` } };
    scope.states[name] = state;
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /** `when`: a Choice that skips the step (its variable set to null) unless the guard is truthy. */
  private guard(step: IrStep, scope: Scope, v: string, frag: Frag): Frag {
    const name = this.helper(step, 'when');
    const skip: Record<string, unknown> = {
      Condition: `{% $not(${this.conditionJsonata(step.when, scope, step)}) %}`,
      Assign: { [v]: null },
    };
    scope.states[name] = {
      Type: 'Choice',
      Comment: this.comment(step, 'runs only when its `when` guard is truthy; a skipped step stores no output'),
      Choices: [skip],
      Default: this.entryOf(frag),
    };
    return { entry: name, tails: [...frag.tails, { holder: skip, field: 'rule' }] };
  }

  /**
   * The envelope every Lambda receives (see @stepforge/contract's envelope.ts, version 2): only what the
   * handler reads. `inputs.steps` holds the read steps a model prompt does not place (the context
   * the handler appends), `inputs.input` is sent only where a handler may fall back to it, and
   * config fields carried elsewhere (the prompt as `inputs.value`, turn limits as `budget`) are left out.
   */
  private payload(step: IrStep, scope: Scope, extra: {
    kind?: LambdaStepKind; role?: string; identity?: string; config?: Record<string, unknown>; value?: unknown;
    iterVars?: readonly string[]; turn?: unknown; toolCall?: unknown; budget?: unknown;
  } = {}): Record<string, unknown> {
    const iter = extra.iterVars ?? scope.iterVars;
    const kind = extra.kind ?? (step.kind as LambdaStepKind);
    const inputs: Record<string, unknown> = {};
    let config = extra.config ?? step.config;
    // A tool call carries its own arguments (`toolCall`); the step's inputs are not read.
    if (extra.toolCall === undefined) {
      const value = extra.value !== undefined ? extra.value : step.input ? this.field(step.input, scope, step) : undefined;
      if (value !== undefined) inputs.value = value;
      const model = kind === 'model' || kind === 'agent';
      if (model) {
        const context = unplacedReads(step, config);
        if (context.length > 0) inputs.steps = this.readsObject(context, scope);
      }
      const nullable = (model || kind === 'function') && mayBeNull(step, extra.value, (t) => this.parse(t));
      if (nullable) inputs.input = `{% ${scope.inputVar} %}`;
      // The prompt is sent rendered as `inputs.value`, always a string here, so the handler never reads `config.prompt`.
      if (model && extra.value === undefined && step.input?.kind === 'template' && typeof step.input.value === 'string' && !nullable) config = omit(config, 'prompt');
    }
    if (kind === 'model' || kind === 'tool') config = omit(config, 'max_turns', 'max_tool_calls');
    const stepField: Record<string, unknown> = { id: step.id, kind, identity: extra.identity ?? step.identity };
    // Empty lists are the schema defaults: left out to keep large definitions under 1 MB.
    if (iter.length > 0) stepField.iteration = `{% [${iter.map((x) => `$${x}`).join(', ')}] %}`;
    if (extra.role !== undefined) stepField.role = extra.role;
    const out: Record<string, unknown> = { version: ENVELOPE_VERSION, run: '{% $run %}', step: stepField, config, inputs, attempt: ATTEMPT };
    if (step.tools.length > 0) out.tools = [...step.tools];
    if (step.secrets.length > 0) out.secrets = [...step.secrets];
    const budget = extra.budget ?? (step.budget ? { maxTurns: step.budget.maxTurns, maxToolCalls: step.budget.maxToolCalls } : undefined);
    if (budget !== undefined) out.budget = budget;
    if (extra.turn !== undefined) out.turn = extra.turn;
    if (extra.toolCall !== undefined) out.toolCall = extra.toolCall;
    // Tool results go to the next reason turn's handler, never to JSONata: only step answers can be state-read.
    else if (this.stateReads.has(step.id) || routesOnItsAgents(step)) out.readByStateMachine = true;
    // The Map's result holds every iteration's value: a larger output travels by reference (checkQuotas budgets with it).
    else if (scope.inMap) out.inlineOutputMaxBytes = ITERATION_INLINE_OUTPUT_MAX_BYTES;
    return out;
  }

  private taskState(step: IrStep, scope: Scope, kind: LambdaStepKind, payload: Record<string, unknown>, assign: Record<string, unknown>, what: string | undefined): AslState {
    const callback = kind === 'tool';
    const timeout = step.timeoutSeconds ?? (callback ? CALLBACK_TIMEOUT_SECONDS : undefined);
    // Fields set one by one rather than spread in (a spread in the middle of a literal built every
    // Task through the slow generic copy, and the states it made were slower to serialise).
    const state: AslState = {
      Type: 'Task',
      Comment: this.comment(step, what),
      Resource: callback ? LAMBDA_INVOKE_CALLBACK : kindPlaceholder(kind),
      Arguments: callback
        ? { FunctionName: kindPlaceholder(kind), Payload: { ...payload, taskToken: '{% $states.context.Task.Token %}' } }
        : payload,
    };
    if (timeout !== undefined) state.TimeoutSeconds = timeout;
    state.Assign = assign;
    state.Retry = renderRetry(step.retry);
    state.Catch = [{
      ErrorEquals: ['States.ALL'],
      // [step id, error output]: the scope's Fail state turns it into the run's error and cause.
      Output: `{% [${JSON.stringify(step.id)}, $states.errorOutput] %}`,
      Next: this.failState(scope),
    }];
    return state;
  }

  private lowerTask(step: IrStep, scope: Scope, v: string): Frag {
    const name = this.stepNames.get(step)!;
    const kind = (step.kind === 'agent' ? 'agent' : step.kind) as LambdaStepKind;
    const state = this.taskState(step, scope, kind, this.payload(step, scope), { [v]: `{% ${RESULT_VALUE} %}` }, kind === 'tool' ? 'answered through a task token (a gated call waits for a human)' : undefined);
    scope.states[name] = state;
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /**
   * One model turn of a step whose tool calls another step runs (IrStep.handsOverToolCalls): the
   * agent loop's reason Task alone, continuing the conversation at the turn the variables hold with
   * the results the other step left. Its variable is the answer once the model asks for no tools.
   */
  private lowerHandedOverTurn(step: IrStep, scope: Scope, v: string, t: TurnVariables): Frag {
    const name = this.stepNames.get(step)!;
    const budget = step.budget ?? { maxTurns: 16, maxToolCalls: 20 };
    const state = this.taskState(step, scope, 'model', this.payload(step, scope, {
      kind: 'model',
      role: 'reason',
      turn: { index: `{% $${t.turn} %}`, toolResults: `{% $${t.results} %}` },
      budget: { maxTurns: budget.maxTurns, maxToolCalls: budget.maxToolCalls, turnsUsed: `{% $${t.turn} %}`, toolCallsUsed: `{% $${t.calls} %}` },
    }), {
      [v]: '{% $states.result.done = true ? $states.result.output : null %}',
      [t.reply]: '{% $states.result %}',
    }, 'one model turn (model Lambda); the tool calls it asks for are run by the task its tool_call branch goes to');
    scope.states[name] = state;
    scope.env.set(step.id, `$${v}`);
    scope.produced.push({ variable: v, steps: [step.id] });
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /**
   * Runs the tool calls the last turn of `of` handed over: a Map over them (the tool Lambda each,
   * through a task token, so a gated call waits for a human), whose results go to that step's next
   * turn. Its variable is the list of results.
   */
  /**
   * The one tool call inside an agent loop's Map over its calls: the tool Lambda, answered through a
   * task token, its result the iteration's output. `granted` names what holds the grants in the comment.
   */
  private toolCallState(step: IrStep, scope: Scope, iterScope: Scope, budget: { readonly maxTurns: number; readonly maxToolCalls: number }, turnVar: string, callsVar: string, granted: 'task' | 'step'): AslState {
    const toolState = this.taskState(step, iterScope, 'tool', this.payload(step, scope, {
      kind: 'tool',
      role: 'tool',
      value: undefined,
      toolCall: '{% $states.input %}',
      budget: { maxTurns: budget.maxTurns, maxToolCalls: budget.maxToolCalls, turnsUsed: `{% $${turnVar} %}`, toolCallsUsed: `{% $${callsVar} %}` },
    }), {}, `one tool call (tool Lambda, answered through a task token; the runtime refuses tools the ${granted} was not granted, and a gated call waits for a human)`);
    delete toolState.Assign;
    toolState.Output = '{% $states.result %}';
    toolState.End = true;
    return toolState;
  }

  private lowerHandedOverCalls(step: IrStep, scope: Scope, v: string, of: IrStep, t: TurnVariables): Frag {
    const name = this.stepNames.get(step)!;
    const budget = of.budget ?? { maxTurns: 16, maxToolCalls: 20 };
    const toolTask = this.helper(step, 'tool');
    const iterScope: Scope = { ...scope, label: name, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
    iterScope.states[toolTask] = this.toolCallState(step, scope, iterScope, budget, t.turn, t.calls, 'task');
    const state: AslState = {
      Type: 'Map',
      Comment: this.comment(step, `the tool calls '${of.id}' asked for`),
      Items: `{% $exists($${t.reply}.toolCalls) ? $append([], $${t.reply}.toolCalls) : [] %}`,
      MaxConcurrency: 10,
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: toolTask, States: iterScope.states },
      Assign: {
        [v]: '{% $states.result %}',
        [t.results]: '{% $states.result %}',
        [t.turn]: `{% $${t.turn} + 1 %}`,
        [t.calls]: `{% $${t.calls} + $count($states.result) %}`,
      },
      Catch: [{ ErrorEquals: ['States.ALL'], Output: `{% [${JSON.stringify(step.id)}, $states.errorOutput] %}`, Next: this.failState(scope) }],
    };
    scope.states[name] = state;
    scope.env.set(step.id, `$${v}`);
    scope.produced.push({ variable: v, steps: [step.id] });
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /** Reason → Map over the tool calls (tool Lambda each) → back; bounded by the turn and tool-call budget. */
  private lowerAgentLoop(step: IrStep, scope: Scope, v: string): Frag {
    const budget = step.budget ?? { maxTurns: 16, maxToolCalls: 20 };
    // The reason state keeps the step's own name: it is what the console shows for the step.
    const reason = this.stepNames.get(step)!;
    const check = this.helper(step, 'tool calls?');
    const tools = this.helper(step, 'call tools');
    const toolTask = this.helper(step, 'tool');
    const out = this.helper(step, 'out of budget');
    const turn = this.names.variable(`${v}_turn`);
    const calls = this.names.variable(`${v}_calls`);
    const results = this.names.variable(`${v}_results`);
    const reply = this.names.variable(`${v}_reply`);
    const counters = { [turn]: 0, [calls]: 0, [results]: [] };
    const init = {
      assign: counters,
      materialize: this.initPass(scope, () => this.helper(step, 'start'),
        this.comment(step, `agent loop: at most ${budget.maxTurns} turns and ${budget.maxToolCalls} tool calls`), () => counters, reason),
    };
    scope.states[reason] = this.taskState(step, scope, 'model', this.payload(step, scope, {
      kind: 'model',
      role: 'reason',
      turn: { index: `{% $${turn} %}`, toolResults: `{% $${results} %}` },
      budget: { maxTurns: budget.maxTurns, maxToolCalls: budget.maxToolCalls, turnsUsed: `{% $${turn} %}`, toolCallsUsed: `{% $${calls} %}` },
    }), { [reply]: '{% $states.result %}' }, 'agent turn (model Lambda); the conversation lives in DynamoDB');
    scope.states[reason]!.Next = check;
    const done: Record<string, unknown> = {
      Condition: `{% $${reply}.done = true or $count($${reply}.toolCalls) = 0 %}`,
      Assign: { [v]: `{% $${reply}.output %}` },
    };
    scope.states[check] = {
      Type: 'Choice',
      Comment: this.comment(step, 'done, out of budget, or run the requested tools'),
      Choices: [
        done,
        {
          Condition: `{% $${turn} + 1 >= ${budget.maxTurns} or $${calls} + $count($${reply}.toolCalls) > ${budget.maxToolCalls} %}`,
          Next: out,
        },
      ],
      Default: tools,
    };
    scope.states[out] = {
      Type: 'Fail',
      Comment: this.comment(step, 'the agent loop ran out of its turn / tool-call budget'),
      Error: BUDGET_EXCEEDED,
      Cause: `{% "step '${step.id}' exceeded its budget of ${budget.maxTurns} turns / ${budget.maxToolCalls} tool calls after " & $string($${turn} + 1) & " turns and " & $string($${calls}) & " tool calls" %}`,
    };
    const iterScope: Scope = { ...scope, label: tools, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
    iterScope.states[toolTask] = this.toolCallState(step, scope, iterScope, budget, turn, calls, 'step');
    scope.states[tools] = {
      Type: 'Map',
      Comment: this.comment(step, 'the tool calls of this turn'),
      Items: `{% $append([], $${reply}.toolCalls) %}`,
      MaxConcurrency: 10,
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: toolTask, States: iterScope.states },
      Assign: {
        [results]: '{% $states.result %}',
        [turn]: `{% $${turn} + 1 %}`,
        [calls]: `{% $${calls} + $count($states.result) %}`,
      },
      Next: reason,
    };
    return { entry: reason, init, tails: [{ holder: done, field: 'rule', loop: step }] };
  }

  /**
   * A consensus judge's choice must be one of the candidates, verbatim. The judge's Task (its reason
   * Task, in an agent loop) carries the candidates as `inputs.candidates`, and the model handler fails
   * the step with JudgeChoiceNotCandidate otherwise. The handler, not a Choice after the Task, checks:
   * it compares resolved values (a candidate or the answer may travel by reference), the failure lands
   * on the step record where `runs retry` finds it, and the run enters no extra states (a Choice and
   * the Output Pass a Choice would need at the end of the run).
   */
  private checkVerbatim(step: IrStep, scope: Scope, frag: Frag): Frag {
    const task = scope.states[this.stepNames.get(step)!];
    const args = task?.Arguments as { inputs?: Record<string, unknown> } | undefined;
    if (task?.Type !== 'Task' || args?.inputs === undefined) {
      this.fail('judge_shape', `step '${step.id}' is a consensus judge but did not lower to a model Task`, step);
    }
    const resolve = this.resolveRoot(scope, step);
    args.inputs.candidates = Object.fromEntries(step.chooseFrom!.map((c) => [c, `{% ${resolve({ kind: 'step', step: c })} %}`]));
    return frag;
  }

  private lowerForEach(step: IrStep, scope: Scope, v: string): Frag {
    const c = step.composite ?? {};
    const name = this.stepNames.get(step)!;
    const max = c.maxIterations ?? 50;
    const as = c.as ?? 'item';
    const itemState = this.helper(step, 'item');
    const inputVar = this.names.variable(`${v}_input`);
    const index = this.names.variable(`${v}_index`);
    const inner: Scope = {
      label: name, states: {}, env: scope.env.child(),
      inputVar: `$${inputVar}`, iterVars: [...scope.iterVars, index], inMap: true, produced: [],
    };
    const body = c.body ?? { steps: [], edges: [] };
    const bodyFrag = this.lowerWorkflowBody(body, inner, false);
    const first: AslState = {
      Type: 'Pass',
      Comment: this.comment(step, `binds input.${as} and the iteration index`),
      Assign: {
        [inputVar]: `{% $merge([${scope.inputVar}, {${JSON.stringify(as)}: $states.input.item}]) %}`,
        [index]: '{% $states.input.index %}',
      },
    };
    inner.states[itemState] = first;
    const frag: Frag = bodyFrag ? (this.connect([{ holder: first, field: 'Next' }], bodyFrag), bodyFrag) : { entry: itemState, tails: [{ holder: first, field: 'Next' }] };
    const result = bodyFrag ? this.resultExpr(body, inner) : 'null';
    this.closeScope(frag, inner, (assigns) => valueOf(result, assigns));
    const items = c.items ? this.valueJsonata(c.items, scope, step) : '[]';
    const state: AslState = {
      Type: 'Map',
      Comment: this.comment(step, `for each item (at most ${max}, ${c.parallel ? 'up to 10 at once' : 'one at a time'})`),
      // A missing or null list is no items (not one null item, as $append would make it); a single
      // value is a list of one, as JSONata treats it everywhere. A string holding a JSON array (a
      // step that answered with JSON text) is that array: outputs are parsed for downstream use.
      Items: `{% ( ${jsonataHelperBindings(['$sfJson'])} $raw := ${items}; $parsed := $sfJson($raw); $given := $type($parsed) = 'array' ? $parsed : $raw; $all := $exists($given) and $type($given) != 'null' ? $append([], $given) : []; $append([], $filter($all, function($v, $i) { $i < ${max} })) ) %}`,
      ItemSelector: { item: '{% $states.context.Map.Item.Value %}', index: '{% $states.context.Map.Item.Index %}' },
      MaxConcurrency: c.parallel ? 10 : 1,
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: this.foldEntryPass(inner.states, itemState), States: inner.states },
      Assign: { [v]: '{% $states.result %}' },
    };
    scope.states[name] = state;
    return { entry: name, tails: [{ holder: state, field: 'Next' }] };
  }

  /**
   * A conditional's inline `then:` / `else:`: after the condition (in `v`), a Choice runs the branch
   * it picks and sets the other branch's variable to null (a skipped step stores no output, as a
   * false `when` does); a Pass then makes the taken branch's output the conditional's (null when the
   * picked branch is not written).
   */
  private lowerBranches(step: IrStep, scope: Scope, v: string, cond: Frag): Frag {
    const c = step.composite!;
    const body = c.body!;
    const pick = this.helper(step, 'then or else?');
    const join = this.helper(step, 'output');
    const lower = (i: number | undefined) => {
      const s = i === undefined ? undefined : body.steps[i];
      return s ? { frag: this.lowerStep(s, scope), variable: scope.env.get(s.id)! } : undefined;
    };
    const yes = lower(c.thenStep);
    const no = lower(c.elseStep);
    const joinState: AslState = {
      Type: 'Pass',
      Comment: this.comment(step, 'its output is the output of the branch that ran'),
      Assign: { [v]: `{% $${v} ? ${yes?.variable ?? 'null'} : ${no?.variable ?? 'null'} %}` },
    };
    scope.states[join] = joinState;
    const rule = (taken: typeof yes, other: typeof yes, condition: string): Record<string, unknown> => {
      const r: Record<string, unknown> = { Condition: condition };
      if (other) r.Assign = { [other.variable.slice(1)]: null };
      if (taken) this.connect([{ holder: r, field: 'rule' }], taken.frag);
      else r.Next = join;
      return r;
    };
    scope.states[pick] = {
      Type: 'Choice',
      Comment: this.comment(step, 'runs then: when the condition holds, else: otherwise; the other branch is skipped'),
      Choices: [rule(yes, no, `{% $${v} %}`), rule(no, yes, '{% true %}')],
    };
    this.patch(cond.tails, pick);
    for (const b of [yes, no]) if (b) this.patch(b.frag.tails, join);
    return { entry: cond.entry, tails: [{ holder: joinState, field: 'Next' }] };
  }

  private lowerWhile(step: IrStep, scope: Scope, v: string): Frag {
    const c = step.composite ?? {};
    const name = this.stepNames.get(step)!;
    const max = c.maxIterations ?? 10;
    const count = this.names.variable(`${v}_iteration`);
    const again = this.helper(step, 'again?');
    // The body sees `input.iteration` as its index (from 0); the condition, checked after each
    // iteration, as the number of iterations run so far (the index of the next one), so
    // `input.iteration < 3` runs three. Both share the outer scope's variables.
    const iterInput = `$merge([${scope.inputVar}, {"iteration": $${count}}])`;
    const inner: Scope = { ...scope, inputVar: iterInput, iterVars: [...scope.iterVars, count] };
    const body = c.body ?? { steps: [], edges: [] };
    // The body may read `steps.<this while>.output`: the previous iteration's result, kept in the
    // while's own variable (null until the first iteration ends). Only a while whose body reads
    // itself keeps it up to date, so others compile as before.
    const readsSelf = workflowReads(body, step.id);
    if (readsSelf) scope.env.set(step.id, `$${v}`);
    const bodyFrag = this.lowerWorkflowBody(body, inner, false);
    if (bodyFrag) this.patch(bodyFrag.tails, again);
    // The body's steps are visible after it (the condition, the result), as they were in this scope.
    const result = bodyFrag ? this.resultExpr(body, inner) : 'null';
    // The condition, checked after an iteration, reads the while's output as that iteration's result.
    const conditionEnv = scope.env.child();
    conditionEnv.set(step.id, `( ${result} )`);
    const conditionScope: Scope = { ...inner, env: conditionEnv, inputVar: `$merge([${scope.inputVar}, {"iteration": $${count} + 1}])` };
    const exit: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: `{% ${result} %}` } };
    const condition = this.conditionJsonata(c.condition, conditionScope, step);
    scope.states[again] = {
      Type: 'Choice',
      Comment: this.comment(step, 'run the body again while the condition holds'),
      Choices: [
        {
          Condition: `{% $${count} + 1 < ${max} and ${condition} %}`,
          // Going round again also re-enters the body (its own init variables, e.g. an agent loop's counters).
          Assign: { ...bodyFrag?.init?.assign, [count]: `{% $${count} + 1 %}`, ...(readsSelf ? { [v]: `{% ${result} %}` } : {}) },
          Next: bodyFrag?.entry ?? again,
        },
        exit,
      ],
    };
    // The counter starts at 0 on the way in (the init Pass, named after the step, only where nothing leads in).
    const assign = { [count]: 0, ...(readsSelf ? { [v]: null } : {}), ...bodyFrag?.init?.assign };
    const entry = bodyFrag?.entry ?? again;
    return {
      entry,
      init: { assign, materialize: this.initPass(scope, () => name, this.comment(step, `loop: the body runs at least once and at most ${max} times`), () => assign, entry) },
      tails: [{ holder: exit, field: 'rule' }],
    };
  }

  private agentTask(step: IrStep, scope: Scope, ref: IrAgentRef, stateName: string, value: unknown, assign: Record<string, unknown>, iterVars?: readonly string[]): AslState {
    // The agent's own configuration travels with each call of it, as it does on an agent step.
    const config = { ...step.config, agent: ref.agent, role: ref.role, ...(ref.agentConfig ? { agentConfig: ref.agentConfig } : {}), ...(ref.focus !== undefined ? { focus: ref.focus } : {}) };
    const state = this.taskState(step, scope, 'agent', this.payload(step, scope, {
      kind: 'agent', role: ref.role, identity: ref.identity, config, value, iterVars,
    }), assign, `agent '${ref.agent}' as ${ref.role}`);
    scope.states[stateName] = state;
    return state;
  }

  private lowerJudgeLoop(step: IrStep, scope: Scope, v: string): Frag {
    const c = step.composite ?? {};
    const name = this.stepNames.get(step)!;
    const max = c.maxIterations ?? 5;
    const gen = this.helper(step, 'generator');
    const evaluate = this.helper(step, 'evaluator');
    const passed = this.helper(step, 'passed?');
    const count = this.names.variable(`${v}_iteration`);
    const candidate = this.names.variable(`${v}_candidate`);
    const evaluation = this.names.variable(`${v}_evaluation`);
    const counters = { [count]: 0, [candidate]: null, [evaluation]: null };
    const init = { assign: counters, materialize: this.initPass(scope, () => name, this.comment(step, `generate → evaluate → check pass_condition, at most ${max} rounds`), () => counters, gen) };
    const iterVars = [...scope.iterVars, count];
    // Prompts are text, as GraphN sends them: the worker gets the resolved input_template, and after
    // a failed round the same input followed by the evaluator's feedback; the evaluator gets the
    // worker's output. (Structured prompts re-embedded each round's answer as escaped JSON, so they
    // grew with every round.)
    const task = asText(step.input ? this.valueJsonata(step.input, scope, step) : 'null');
    const genState = this.agentTask(step, scope, c.generator ?? { agent: 'generator', role: 'generator', identity: step.identity }, gen,
      `{% ( $task := ${task}; $${count} = 0 ? $task : $task & ${JSON.stringify('\n\nPrevious feedback: ')} & ${asText(`$${evaluation}`)} ) %}`,
      { [candidate]: `{% ${RESULT_VALUE} %}` }, iterVars);
    genState.Next = evaluate;
    const evalState = this.agentTask(step, scope, c.evaluator ?? { agent: 'evaluator', role: 'evaluator', identity: step.identity }, evaluate,
      `{% ${asText(`$${candidate}`)} %}`,
      { [evaluation]: `{% ${RESULT_VALUE} %}` }, iterVars);
    evalState.Next = passed;
    // pass_condition sees `input.evaluation`, `input.candidate` and `input.iteration` (DSL contract).
    // pass_condition may read `steps.<this judge_loop>.output`: the latest round's candidate.
    const condEnv = scope.env.child();
    condEnv.set(step.id, `$${candidate}`);
    const condScope: Scope = {
      ...scope,
      env: condEnv,
      inputVar: `$merge([${scope.inputVar}, {"evaluation": $${evaluation}, "candidate": $${candidate}, "iteration": $${count}}])`,
    };
    const result = `{% $${candidate} %}`;
    const pass: Record<string, unknown> = { Condition: `{% ${this.conditionJsonata(c.condition, condScope, step)} %}`, Assign: { [v]: result } };
    const exhausted: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: result } };
    scope.states[passed] = {
      Type: 'Choice',
      Comment: this.comment(step, 'stop when pass_condition holds or the rounds are used up'),
      Choices: [
        pass,
        { Condition: `{% $${count} + 1 < ${max} %}`, Assign: { [count]: `{% $${count} + 1 %}` }, Next: gen },
        exhausted,
      ],
    };
    return { entry: gen, init, tails: [{ holder: pass, field: 'rule' }, { holder: exhausted, field: 'rule' }] };
  }

  private lowerAnalyzer(step: IrStep, scope: Scope, v: string): Frag {
    const c = step.composite ?? {};
    const analysts = c.analysts ?? [];
    const par = this.helper(step, 'analysts');
    const agg = this.stepNames.get(step)!;
    const collected = this.names.variable(`${v}_analyses`);
    const input = step.input ? this.field(step.input, scope, step) : undefined;
    const keys = analystKeys(analysts);
    const branches = analysts.map((a, i) => {
      const inner: Scope = { ...scope, label: par, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
      const sName = this.helper(step, keys[i]!);
      const s = this.agentTask(step, inner, a, sName, input ?? null, {});
      delete s.Assign;
      s.Output = `{% ${RESULT_VALUE} %}`;
      s.End = true;
      return { StartAt: sName, States: inner.states };
    });
    // Each analyst's output under its own header (`## <agent>`, as GraphN writes it), in list order.
    const headed = keys.map((k, i) => `${JSON.stringify(`## ${k}\n`)} & ( $o := $states.result[${i}]; $type($o) = "string" ? $o : $string($o) )`).join(' & "\\n\\n" & ');
    scope.states[par] = {
      Type: 'Parallel',
      Comment: this.comment(step, `${analysts.length} analysts in parallel`),
      Branches: branches,
      Assign: {
        [collected]: `{% {"byAnalyst": {${keys.map((k, i) => `${JSON.stringify(k)}: $states.result[${i}]`).join(', ')}}, "text": ${headed || '""'}} %}`,
      },
      Next: agg,
    };
    const aggRef = c.aggregator ?? { agent: 'aggregator', role: 'aggregator', identity: step.identity };
    const aggState = this.agentTask(step, scope, aggRef, agg,
      { task: input ?? null, analyses: `{% $${collected}.text %}`, byAnalyst: `{% $${collected}.byAnalyst %}` },
      { [v]: `{% ${RESULT_VALUE} %}` });
    return { entry: par, tails: [{ holder: aggState, field: 'Next' }] };
  }

  /**
   * A workflow written in code: one function Task per node (named after it), each followed by a
   * Choice over the edges leaving it. The run state is a variable: a node gets it as its input and
   * its returned `data` is merged in. An edge's `when` matches the returned `condition` first (all
   * those rules come first), then `intent`; an edge without `when` is the Choice's Default. Cycles
   * are bounded by a node-run counter (MaxIterationsExceeded past the bound).
   */
  private lowerCodeGraph(step: IrStep, scope: Scope, v: string): Frag {
    if (step.composite?.sdk) return this.lowerSdk(step, scope, v, step.composite.sdk);
    const g = step.composite?.graph;
    if (!g) this.fail('invalid_document', `code workflow '${step.id}' has no graph`, step);
    const state = this.names.variable(`${v}_state`);
    const last = this.names.variable(`${v}_last`);
    const runs = this.names.variable(`${v}_runs`);
    const taskName = new Map<string, string>();
    // Where an edge into a node goes: the node's Task, or for a useWorkflow node its input check.
    const entryName = new Map<string, string>();
    // Node states carry the node's own name: that is what the console's execution view shows.
    for (const n of g.nodes) {
      const name = this.names.state(n.name);
      this.stepStates.get(step)!.push(name);
      taskName.set(n.name, name);
      entryName.set(n.name, n.child ? this.helper(step, `${n.name} input`) : name);
    }
    const exitName = this.helper(step, 'end');
    const exit: AslState = { Type: 'Pass', Comment: this.comment(step, 'the run state is the result'), Assign: { [v]: `{% $${state} %}` } };
    scope.states[exitName] = exit;
    const tooMany = this.helper(step, 'too many iterations');
    scope.states[tooMany] = {
      Type: 'Fail', Comment: this.comment(step, `more than ${g.maxIterations} node runs`),
      Error: 'MaxIterationsExceeded', Cause: `workflow '${step.id}' ran more than ${g.maxIterations} nodes: a cycle in its edges did not end`,
    };
    const target = (to: string) => (to === '__end__' ? exitName : entryName.get(to) ?? this.fail('invalid_workflow', `edge to unknown node '${to}'`, step));
    const merged = {
      [state]: `{% $merge([$${state}, $type($states.result.output.data) = "object" ? $states.result.output.data : {}]) %}`,
      [last]: `{% ${RESULT_VALUE} %}`,
      [runs]: `{% $${runs} + 1 %}`,
    };
    for (const n of g.nodes) {
      const node: IrStep = { ...step, id: `${step.id}.${n.name}`, retry: n.retry, identity: stepIdentity('code_node', { graph: step.identity, node: n.name }, []) };
      const config = { codeModule: g.module, codeExport: g.exportName, codeNode: n.name, ...(n.params !== undefined ? { params: n.params } : {}) };
      // Routing follows the state that ends the node: its Task, or a child's output check.
      let name = taskName.get(n.name)!;
      if (n.child) {
        name = this.lowerChildNode(step, scope, node, n.name, n.child, config, state, taskName.get(n.name)!, entryName.get(n.name)!, merged);
      } else {
        const payload = this.payload(node, scope, { kind: 'function', identity: node.identity, value: `{% $${state} %}`, config });
        scope.states[name] = this.taskState(node, scope, 'function', payload, merged, `node '${n.name}' (runs in the function handler)`);
      }
      const task = scope.states[name]!;
      const out = g.edges.filter((e) => e.from === n.name);
      const routed = out.filter((e) => e.when !== undefined);
      const plain = out.find((e) => e.when === undefined);
      if (routed.length === 0) {
        const next = plain ? target(plain.to) : exitName;
        task.Next = next === exitName ? next : this.boundedNext(step, scope, n.name, runs, g.maxIterations, tooMany, next);
        continue;
      }
      const route = this.helper(step, `${n.name} next?`);
      task.Next = route;
      const rule = (field: string) => (e: { when?: string; to: string }) => ({
        Condition: `{% $type($${last}) = "object" and $${last}.${field} = ${JSON.stringify(e.when)} %}`, Next: target(e.to),
      });
      scope.states[route] = {
        Type: 'Choice',
        Comment: this.comment(step, `after '${n.name}': its condition, then its intent, picks the edge`),
        Choices: [
          { Condition: `{% $${runs} >= ${g.maxIterations} %}`, Next: tooMany },
          ...routed.map(rule('condition')), ...routed.map(rule('intent')),
        ],
        Default: plain ? target(plain.to) : exitName,
      };
    }
    const first = entryName.get(g.start) ?? this.fail('invalid_workflow', `the workflow starts at unknown node '${g.start}'`, step);
    // Its own Pass rather than an init folded into whatever leads here: the state starts as the
    // input variable, which a state assigning `input` itself could not read yet.
    const entry = this.stepNames.get(step)!;
    scope.states[entry] = {
      Type: 'Pass', Comment: this.comment(step, 'the run state starts as the input'),
      Assign: { [state]: `{% ${scope.inputVar} %}`, [last]: null, [runs]: 0 }, Next: first,
    };
    return { entry, tails: [{ holder: exit, field: 'Next' }] };
  }

  /**
   * A Kortyx node given `useWorkflow(child, input)`: three states. `<node> input` (function Task)
   * builds the child's input and checks it against the child's inputSchema (WorkflowInputInvalid);
   * `<node>` starts the child's own state machine and waits for it (startExecution.sync:2, whose
   * result carries the child's output as JSON); `<node> output` (function Task) checks that output
   * against the child's outputSchema (WorkflowOutputInvalid) and answers it as the node's `data`.
   * The schemas are zod values in the user's module, so only the function handler can apply them:
   * JSONata has no way to run them. Returns the name of the last state (routing follows it).
   *
   * The child execution is named by the input check (its committed result), so a retried parent,
   * which reuses that result, starts the child under the same name. Step Functions refuses a
   * second execution of that name once the first has closed (ExecutionAlreadyExists); the catch
   * goes to `<node> earlier` (function Task, never committed), which answers the earlier child's
   * output when it succeeded, or the next name to start under when it did not.
   */
  private lowerChildNode(step: IrStep, scope: Scope, node: IrStep, nodeName: string, child: IrCodeChild, config: Record<string, unknown>,
    state: string, startName: string, inputName: string, merged: Record<string, unknown>): string {
    const childIn = this.names.variable(`${state}_child_in`);
    const childName = this.names.variable(`${state}_child_name`);
    const childOut = this.names.variable(`${state}_child_out`);
    const checkIn = this.taskState({ ...node, retry: undefined, identity: stepIdentity('code_child_input', { node: node.identity }, []) }, scope, 'function',
      this.payload(node, scope, { kind: 'function', identity: stepIdentity('code_child_input', { node: node.identity }, []), value: `{% $${state} %}`, config: { ...config, codeFn: 'childInput', codeChild: child.id } }),
      { [childIn]: `{% ${RESULT_VALUE}.input %}`, [childName]: `{% ${RESULT_VALUE}.name %}` }, `node '${nodeName}': the input of workflow '${child.id}', checked against its inputSchema, and the name of its execution (function handler)`);
    checkIn.Next = startName;
    scope.states[inputName] = checkIn;
    const start: AslState = {
      Type: 'Task',
      Comment: this.comment(node, `node '${nodeName}': runs workflow '${child.id}' as a nested execution and waits for its output`),
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Arguments: {
        // The child is deployed beside the parent, in its account and region, under its workflow name.
        StateMachineArn: `{% $substringBefore($states.context.StateMachine.Id, ":stateMachine:") & ":stateMachine:" & ${JSON.stringify(child.name)} %}`,
        Name: `{% $${childName} %}`,
        Input: `{% $${childIn} %}`,
      },
      Assign: { [childOut]: '{% $states.result.Output %}' },
    };
    // The node's behavior.retry only: the Lambda transient retrier of function Tasks has nothing to match here.
    const retry = renderRetry(node.retry).slice(1);
    if (retry.length > 0) start.Retry = retry;
    const earlierName = this.helper(step, `${nodeName} earlier`);
    start.Catch = [
      // AWS names the integration's error StepFunctions.ExecutionAlreadyExistsException; the embedded engine SFN.ExecutionAlreadyExists.
      { ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException', 'SFN.ExecutionAlreadyExists'], Next: earlierName },
      { ErrorEquals: ['States.ALL'], Output: `{% [${JSON.stringify(node.id)}, $states.errorOutput] %}`, Next: this.failState(scope) },
    ];
    scope.states[startName] = start;
    const outputName = this.helper(step, `${nodeName} output`);
    const childReused = this.names.variable(`${state}_child_reused`);
    const earlierIdentity = stepIdentity('code_child_earlier', { node: node.identity }, []);
    const earlier = this.taskState({ ...node, retry: undefined, identity: earlierIdentity }, scope, 'function',
      this.payload(node, scope, {
        kind: 'function', identity: earlierIdentity, config: { ...config, codeFn: 'childEarlier', codeChild: child.id },
        value: `{% {"executionArn": $substringBefore($states.context.StateMachine.Id, ":stateMachine:") & ":execution:" & ${JSON.stringify(child.name)} & ":" & $${childName}} %}`,
      }),
      { [childOut]: `{% ${RESULT_VALUE}.output %}`, [childName]: `{% ${RESULT_VALUE}.name %}`, [childReused]: `{% ${RESULT_VALUE}.reused %}` }, `node '${nodeName}': an execution of '${child.id}' under this name exists already (a retried run): its output, or the name to start under`);
    const earlierDone = this.helper(step, `${nodeName} earlier done?`);
    earlier.Next = earlierDone;
    scope.states[earlierName] = earlier;
    scope.states[earlierDone] = {
      Type: 'Choice', Comment: this.comment(node, `node '${nodeName}': the earlier child succeeded (its output is reused), or it is started under the next name`),
      Choices: [{ Condition: `{% $${childReused} %}`, Next: outputName }], Default: startName,
    };
    const checkOut = this.taskState({ ...node, retry: undefined, identity: stepIdentity('code_child_output', { node: node.identity }, []) }, scope, 'function',
      this.payload(node, scope, { kind: 'function', identity: stepIdentity('code_child_output', { node: node.identity }, []), value: `{% $${childOut} %}`, config: { ...config, codeFn: 'childOutput', codeChild: child.id } }),
      merged, `node '${nodeName}': the output of workflow '${child.id}', checked against its outputSchema (function handler)`);
    start.Next = outputName;
    scope.states[outputName] = checkOut;
    return outputName;
  }

  // ---- the agent SDK (workflow, parallel, stateGraph) -----------------------------------------

  /**
   * An agent SDK workflow. Its agents are model Tasks named after them; the user's functions
   * (`when`, `transform`, graph nodes, `inputFn` / `mergeFn`, routers) are function Tasks the
   * handler resolves in the module by node name, function and path. The result has the SDK's
   * shape: workflow `{output, steps, stoppedEarly}`, parallel `{results, fulfilled, rejected}`,
   * stateGraph `{state, steps, iterations, terminatedBy}`.
   */
  private lowerSdk(step: IrStep, scope: Scope, v: string, sdk: IrSdkFlow): Frag {
    if (sdk.shape === 'stateGraph') return this.lowerSdkGraph(step, scope, v, sdk);
    const entry = this.stepNames.get(step)!;
    const prev = this.names.variable(`${v}_prev`);
    const steps = this.names.variable(`${v}_steps`);
    const input = this.names.variable(`${v}_in`);
    const ok = this.names.variable(`${v}_ok`);
    // States (and Choice rules) that go on to whatever comes next, linked once that is known.
    let pending: { holder: object; field: 'Next' | 'Default' }[] = [];
    const reach = (name: string) => { for (const p of pending) (p.holder as Record<string, unknown>)[p.field] = name; pending = []; };
    // A run's input is an object; the SDK's input is often text, which a run carries as {"input": …}
    // (as `run` does with text on standard input, and `.run(text)` does).
    const i = scope.inputVar;
    const start: AslState = {
      Type: 'Pass', Comment: this.comment(step, 'the first step gets the workflow input'),
      Assign: { [prev]: `{% $type(${i}) = "object" and $count($keys(${i})) = 1 and $exists(${i}.input) ? ${i}.input : ${i} %}`, [steps]: [] },
    };
    scope.states[entry] = start;
    pending.push({ holder: start, field: 'Next' });
    if (sdk.shape === 'parallel') {
      const group = this.sdkParallel(step, scope, sdk, entry, sdk.branches ?? [], `$${prev}`);
      reach(group.name);
      const exit: AslState = {
        Type: 'Pass', Comment: this.comment(step, 'each branch settled: fulfilled with its value or rejected with its error'),
        Assign: { [v]: `{% {"results": $${group.results}, "fulfilled": $count($${group.results}[status = "fulfilled"]), "rejected": $count($${group.results}[status = "rejected"])} %}` },
      };
      const exitName = this.helper(step, 'results');
      scope.states[exitName] = exit;
      group.state.Next = exitName;
      return { entry, tails: [{ holder: exit, field: 'Next' }] };
    }
    for (const item of sdk.items ?? []) {
      if (item.kind === 'parallel') {
        const group = this.sdkParallel(step, scope, sdk, item.name, item.branches, `$${prev}`);
        reach(group.name);
        // Inside a workflow a group answers with its fulfilled outputs, one per line; none fails the run.
        const fulfilled = `$${group.results}[status = "fulfilled"]`;
        group.state.Assign = {
          ...group.state.Assign as Record<string, unknown>,
          // Assign reads the variables as they were before the state: the group's results are $states.result here.
          [prev]: `{% $join($append([], $map($states.result[status = "fulfilled"], function($r) { $type($r.value) = "string" ? $r.value : $string($r.value) })), "\\n") %}`,
          [steps]: `{% $append($${steps}, [{"parallel": ${JSON.stringify(item.name)}, "results": $states.result}]) %}`,
        };
        const check = this.helper(step, `${item.name} any?`);
        const none = this.helper(step, `${item.name} all failed`);
        scope.states[none] = {
          Type: 'Fail', Comment: this.comment(step, `every branch of '${item.name}' failed`),
          Error: 'ParallelAllFailed', Cause: `every branch of the parallel group '${item.name}' failed`,
        };
        const rule: Record<string, unknown> = { Condition: `{% $count(${fulfilled}) = 0 %}`, Next: none };
        const choice: AslState = { Type: 'Choice', Comment: this.comment(step, `'${item.name}' fails the run only when no branch was fulfilled`), Choices: [rule] };
        scope.states[check] = choice;
        group.state.Next = check;
        pending.push({ holder: choice, field: 'Default' });
        continue;
      }
      const s = item.step;
      const agentName = this.names.state(s.name);
      this.stepStates.get(step)!.push(agentName);
      const agentRun = this.sdkAgent(step, scope, s, agentName, s.transform ? `$${input}` : `$${prev}`, (result) => ({
        [prev]: `{% ${result} %}`,
        [steps]: `{% $append($${steps}, [{"agent": ${JSON.stringify(s.name)}, "output": ${result}}]) %}`,
      }));
      let first = agentRun.entry;
      if (s.transform) {
        const t = this.helper(step, `${s.name} transform`);
        this.sdkFunctionTask(step, scope, sdk, t, s.name, 'transform', s.path, `{% $${prev} %}`, { [input]: `{% ${RESULT_VALUE} %}` }).Next = first;
        first = t;
      }
      if (s.when) {
        const w = this.helper(step, `${s.name} when?`);
        const run = this.helper(step, `${s.name} run?`);
        this.sdkFunctionTask(step, scope, sdk, w, s.name, 'when', s.path, `{% $${prev} %}`, { [ok]: `{% ${RESULT_VALUE} = true %}` }).Next = run;
        // A false `when` skips the step: the previous response is passed on.
        const skip: Record<string, unknown> = {
          Condition: `{% $not($${ok}) %}`,
          Assign: { [steps]: `{% $append($${steps}, [{"agent": ${JSON.stringify(s.name)}, "skipped": true}]) %}` },
        };
        scope.states[run] = { Type: 'Choice', Comment: this.comment(step, `'${s.name}' runs only when its when(prev) is true`), Choices: [skip], Default: first };
        reach(w);
        pending.push({ holder: skip, field: 'Next' });
      } else {
        reach(first);
      }
      pending.push(agentRun.next);
    }
    const exitName = this.helper(step, 'result');
    const exit: AslState = {
      Type: 'Pass', Comment: this.comment(step, 'the last response is the output'),
      Assign: { [v]: `{% {"output": $${prev}, "steps": $${steps}, "stoppedEarly": false} %}` },
    };
    scope.states[exitName] = exit;
    reach(exitName);
    return { entry, tails: [{ holder: exit, field: 'Next' }] };
  }

  /**
   * A `parallel([...])` group: a Parallel state with one branch per agent. Each branch catches its
   * own failure (isolation), so the group settles like Promise.allSettled: `{status: "fulfilled",
   * agent, value}` or `{status: "rejected", agent, reason: {error, cause}}`, in branch order.
   */
  private sdkParallel(step: IrStep, scope: Scope, sdk: IrSdkFlow, name: string, branches: readonly IrSdkStep[], groupInput: string): { name: string; state: AslState; results: string } {
    const stateName = name === this.stepNames.get(step) ? this.helper(step, 'parallel') : this.names.state(name);
    if (stateName !== this.stepNames.get(step)) this.stepStates.get(step)!.push(stateName);
    const results = this.names.variable(`${this.names.stepVariable(step.id)}_group`);
    const Branches = branches.map((b) => {
      const states: Record<string, AslState> = {};
      const branchScope: Scope = { ...scope, label: b.name, states, produced: [], failState: 'unused', top: false, env: scope.env.child() };
      const agentName = this.names.state(b.name);
      this.stepStates.get(step)!.push(agentName);
      const failed = this.helper(step, `${b.name} failed`);
      let value = b.input !== undefined ? b.input : `{% ${groupInput} %}`;
      let startAt = agentName;
      const branchValue = value;
      if (b.transform) {
        // A branch cannot set the workflow's variables: the transformed input is the next state's input.
        startAt = this.helper(step, `${b.name} transform`);
        const t = this.sdkFunctionTask(step, branchScope, sdk, startAt, b.name, 'transform', b.path, value, {});
        delete t.Assign;
        t.Output = `{% ${RESULT_VALUE} %}`;
        t.Catch = [{ ErrorEquals: ['States.ALL'], Output: '{% $states.errorOutput %}', Next: failed }];
        t.Next = agentName;
        value = '{% $states.input %}';
      }
      if (b.when) {
        // A false when(input) skips the branch, which passes its input on as its value (as a
        // skipped workflow step passes the previous response on). The decision travels as the
        // branch's state input: a branch cannot set the workflow's variables.
        const decide = this.helper(step, `${b.name} when?`);
        const run = this.helper(step, `${b.name} run?`);
        const skipped = this.helper(step, `${b.name} skipped`);
        const w = this.sdkFunctionTask(step, branchScope, sdk, decide, b.name, 'when', b.path, branchValue, {});
        delete w.Assign;
        w.Output = `{% {"run": ${RESULT_VALUE} = true} %}`;
        w.Catch = [{ ErrorEquals: ['States.ALL'], Output: '{% $states.errorOutput %}', Next: failed }];
        w.Next = run;
        states[run] = {
          Type: 'Choice', Comment: this.comment(step, `'${b.name}' runs only when its when(input) is true`),
          Choices: [{ Condition: '{% $states.input.run %}', Next: startAt }], Default: skipped,
        };
        const passed = typeof branchValue === 'string' && branchValue.startsWith('{% ') ? branchValue.slice(3, -3) : JSON.stringify(branchValue);
        states[skipped] = {
          Type: 'Pass', Comment: this.comment(step, `'${b.name}' skipped: its input is its value`),
          Output: `{% {"status": "fulfilled", "agent": ${JSON.stringify(b.name)}, "value": ${passed}, "skipped": true} %}`, End: true,
        };
        startAt = decide;
      }
      const task = this.sdkAgentTask(step, branchScope, b, agentName, value, {});
      delete task.Assign;
      task.Output = `{% {"status": "fulfilled", "agent": ${JSON.stringify(b.name)}, "value": ${RESULT_VALUE}} %}`;
      task.End = true;
      task.Catch = [{ ErrorEquals: ['States.ALL'], Output: '{% $states.errorOutput %}', Next: failed }];
      states[failed] = {
        Type: 'Pass', Comment: this.comment(step, `'${b.name}' failed: the group goes on without it`),
        // A Lambda's Cause is its error as JSON ({errorType, errorMessage, trace}): the reason keeps the message.
        Output: `{% ( $c := $states.input.Cause; $m := $type($c) = "string" and $substring($c, 0, 13) = "{\\"errorType\\":" ? $eval($c).errorMessage : $c; {"status": "rejected", "agent": ${JSON.stringify(b.name)}, "reason": {"error": $states.input.Error, "cause": $exists($m) ? $m : $c}} ) %}`,
        End: true,
      };
      return { StartAt: startAt, States: states };
    });
    const state: AslState = {
      Type: 'Parallel', Comment: this.comment(step, `${branches.length} agents at once; a failing one does not stop the others`),
      Branches, Assign: { [results]: '{% $states.result %}' },
    };
    scope.states[stateName] = state;
    return { name: stateName, state, results };
  }

  /**
   * An agent of an SDK workflow, reading its input from the variable `input`. Without tools it is
   * one model Task; granted tools, it is the agent loop every other format's agent with tools
   * becomes (reason → the tool calls → back, within the tier budget), its reason Task named after
   * the agent. `assign(result)` says what its answer sets; `next` is where to link what follows.
   */
  private sdkAgent(step: IrStep, scope: Scope, s: { name: string; agent: IrSdkAgent; retry?: IrRetry }, stateName: string, input: string, assign: (result: string) => Record<string, unknown>, iterVars?: readonly string[]): { entry: string; next: { holder: object; field: 'Next' } } {
    if (s.agent.tools.length === 0) {
      const task = this.sdkAgentTask(step, scope, s, stateName, `{% ${input} %}`, assign(RESULT_VALUE), iterVars);
      return { entry: stateName, next: { holder: task, field: 'Next' } };
    }
    const agentConfig = { ...(s.agent.model !== undefined ? { model: s.agent.model } : {}), ...(s.agent.instructions !== undefined ? { instructions: s.agent.instructions } : {}) };
    const sub: IrStep = {
      ...step, id: `${step.id}.${s.name}`, kind: 'agent', tools: [...s.agent.tools], retry: s.retry,
      config: { agent: s.agent.name, ...(Object.keys(agentConfig).length > 0 ? { agentConfig } : {}) },
      identity: stepIdentity('code_agent', { sdk: step.identity, node: s.name }, s.agent.tools),
      input: { kind: 'jsonata', jsonata: input, reads: [] },
    };
    this.stepNames.set(sub, stateName);
    this.stepStates.set(sub, [stateName]);
    // The loop's Fail states and its iteration (a graph's node run) belong to this scope.
    this.failState(scope);
    const loopScope: Scope = iterVars ? { ...scope, iterVars } : scope;
    const frag = this.lowerAgentLoop(sub, loopScope, this.names.variable(`${this.names.stepVariable(step.id)}_agent`));
    loopScope.failState ??= scope.failState;
    // Its init Pass (the loop's counters) is the entry: states before it are this lowering's own.
    const entry = frag.init ? frag.init.materialize() : frag.entry;
    this.stepStates.get(step)!.push(...this.stepStates.get(sub)!.filter((n) => n !== stateName));
    this.stepStates.delete(sub);
    this.stepNames.delete(sub);
    const done = frag.tails[0]!.holder as Record<string, unknown>;
    // The loop's last turn answers in `$<reply>.output`, which the done rule assigns to the step variable.
    const answer = String(Object.values(done.Assign as Record<string, string>)[0]).replace(/^\{% | %\}$/g, '');
    done.Assign = { ...done.Assign as Record<string, unknown>, ...assign(answer) };
    return { entry, next: { holder: done, field: 'Next' } };
  }

  /** An agent of an SDK workflow: a model Task named after it, with its model, instructions, tools and retry. */
  private sdkAgentTask(step: IrStep, scope: Scope, s: { name: string; agent: IrSdkAgent; retry?: IrRetry }, stateName: string, value: unknown, assign: Record<string, unknown>, iterVars?: readonly string[]): AslState {
    const sub: IrStep = {
      ...step, id: `${step.id}.${s.name}`, config: {}, tools: [...s.agent.tools], retry: s.retry,
      identity: stepIdentity('code_agent', { sdk: step.identity, node: s.name }, s.agent.tools),
    };
    const agentConfig = { ...(s.agent.model !== undefined ? { model: s.agent.model } : {}), ...(s.agent.instructions !== undefined ? { instructions: s.agent.instructions } : {}) };
    const ref: IrAgentRef = { agent: s.agent.name, role: 'agent', identity: sub.identity, ...(Object.keys(agentConfig).length > 0 ? { agentConfig } : {}) };
    const task = this.agentTask(sub, scope, ref, stateName, value, assign, iterVars);
    // The state machine passes the answer on itself (joins, merges): it must come back inline.
    (task.Arguments as Record<string, unknown>).readByStateMachine = true;
    return task;
  }

  /** One of the user's functions, called by the function handler: `codeNode` names the node or step, `codeFn` which function. */
  private sdkFunctionTask(step: IrStep, scope: Scope, sdk: IrSdkFlow, stateName: string, node: string, fn: string, path: readonly number[] | undefined, value: unknown, assign: Record<string, unknown>, iterVars?: readonly string[]): AslState {
    const sub: IrStep = { ...step, id: `${step.id}.${node}`, tools: [], retry: undefined, identity: stepIdentity('code_fn', { sdk: step.identity, node, fn }, []) };
    const payload = this.payload(sub, scope, {
      kind: 'function', role: fn, identity: sub.identity, value, iterVars,
      config: { codeModule: sdk.module, codeExport: sdk.exportName, codeNode: node, codeFn: fn, ...(path !== undefined ? { codePath: [...path] } : {}) },
    });
    payload.readByStateMachine = true;
    const task = this.taskState(sub, scope, 'function', payload, assign, `${fn} of '${node}' (runs in the function handler)`);
    scope.states[stateName] = task;
    return task;
  }

  /**
   * A `stateGraph`: the state is a variable each node's returned partial state is merged into. A
   * function node is one function Task; an agent node is inputFn (function) → the agent (model) →
   * mergeFn (function). After a node: its fixed edge, or its router (a function Task returning the
   * next node's name, which a Choice dispatches on; the handler rejects a name that is no node).
   * Every node run counts one iteration; at the bound the graph stops with terminatedBy
   * "maxIterations", at END with "end", and at a node without an edge with "noEdge".
   */
  private lowerSdkGraph(step: IrStep, scope: Scope, v: string, sdk: IrSdkFlow): Frag {
    const entry = this.stepNames.get(step)!;
    const state = this.names.variable(`${v}_state`);
    const steps = this.names.variable(`${v}_steps`);
    const iters = this.names.variable(`${v}_iterations`);
    const hold = this.names.variable(`${v}_hold`);
    const max = sdk.maxIterations ?? 25;
    const iterVars = [...scope.iterVars, iters];
    const nodes = sdk.nodes ?? [];
    const exits: AslState[] = [];
    const exitFor = new Map<string, string>();
    const exit = (by: 'end' | 'maxIterations' | 'noEdge') => {
      let name = exitFor.get(by);
      if (name === undefined) {
        name = this.helper(step, by === 'end' ? 'END' : by === 'maxIterations' ? 'max iterations' : 'no edge');
        const pass: AslState = {
          Type: 'Pass', Comment: this.comment(step, `the graph stops: ${by}`),
          Assign: { [v]: `{% {"state": $${state}, "steps": $${steps}, "iterations": $${iters}, "terminatedBy": ${JSON.stringify(by)}} %}` },
        };
        scope.states[name] = pass;
        exits.push(pass);
        exitFor.set(by, name);
      }
      return name;
    };
    // Each node is entered through a Choice that stops the graph once it has run its bound.
    const gate = new Map(nodes.map((n) => [n.name, this.helper(step, `${n.name}?`)]));
    const merge = (partial: string) => ({
      [state]: `{% $merge([$${state}, $type(${partial}) = "object" ? ${partial} : {}]) %}`,
      [steps]: `{% $append($${steps}, [{"node": NODE, "update": ${partial}}]) %}`,
      [iters]: `{% $${iters} + 1 %}`,
    });
    for (const n of nodes) {
      const name = this.names.state(n.name);
      this.stepStates.get(step)!.push(name);
      const assign = (partial: string) => Object.fromEntries(Object.entries(merge(partial)).map(([k, x]) => [k, x.replace('NODE', JSON.stringify(n.name))]));
      let first = name;
      let last: AslState;
      if (n.agent) {
        const input = this.helper(step, `${n.name} input`);
        const mergeName = this.helper(step, `${n.name} merge`);
        const agentRun = this.sdkAgent(step, scope, { name: n.name, agent: n.agent }, name, `$${hold}`, (result) => ({ [hold]: `{% ${result} %}` }), iterVars);
        (agentRun.next.holder as Record<string, unknown>)[agentRun.next.field] = mergeName;
        this.sdkFunctionTask(step, scope, sdk, input, n.name, 'input', undefined, `{% $${state} %}`, { [hold]: `{% ${RESULT_VALUE} %}` }, iterVars).Next = agentRun.entry;
        last = this.sdkFunctionTask(step, scope, sdk, mergeName, n.name, 'merge', undefined, `{% {"state": $${state}, "output": $${hold}} %}`, assign(RESULT_VALUE), iterVars);
        first = input;
      } else {
        last = this.sdkFunctionTask(step, scope, sdk, name, n.name, 'node', undefined, `{% $${state} %}`, assign(RESULT_VALUE), iterVars);
      }
      scope.states[gate.get(n.name)!] = {
        Type: 'Choice', Comment: this.comment(step, `'${n.name}' runs unless the graph has run ${max} nodes`),
        Choices: [{ Condition: `{% $${iters} >= ${max} %}`, Next: exit('maxIterations') }], Default: first,
      };
      const next = n.next;
      if (next === undefined) last.Next = exit('noEdge');
      else if ('to' in next) last.Next = next.to === '__end__' ? exit('end') : gate.get(next.to)!;
      else {
        const route = this.helper(step, `${n.name} route`);
        const pick = this.helper(step, `${n.name} next`);
        last.Next = route;
        this.sdkFunctionTask(step, scope, sdk, route, n.name, 'route', undefined, `{% $${state} %}`, { [hold]: `{% ${RESULT_VALUE} %}` }, iterVars).Next = pick;
        const unknown = this.helper(step, `${n.name} unknown node`);
        scope.states[unknown] = {
          Type: 'Fail', Comment: this.comment(step, `the router after '${n.name}' named no node`),
          Error: 'UnknownNode', Cause: `the router after node '${n.name}' returned a name that is no node of the graph`,
        };
        scope.states[pick] = {
          Type: 'Choice', Comment: this.comment(step, `the router after '${n.name}' names the next node`),
          Choices: [
            { Condition: `{% $${hold} = "__end__" %}`, Next: exit('end') },
            ...nodes.map((m) => ({ Condition: `{% $${hold} = ${JSON.stringify(m.name)} %}`, Next: gate.get(m.name)! })),
          ],
          Default: unknown,
        };
      }
    }
    scope.states[entry] = {
      Type: 'Pass', Comment: this.comment(step, 'the state starts as the input'),
      Assign: { [state]: `{% $type(${scope.inputVar}) = "object" ? ${scope.inputVar} : {} %}`, [steps]: [], [iters]: 0, [hold]: null },
      Next: gate.get(sdk.start ?? nodes[0]!.name)!,
    };
    return { entry, tails: exits.map((holder) => ({ holder, field: 'Next' as const })) };
  }

  /** A fixed edge inside a possibly cyclic graph: a Choice that stops the run past the bound. */
  private boundedNext(step: IrStep, scope: Scope, from: string, runs: string, max: number, tooMany: string, next: string): string {
    const name = this.helper(step, `${from} next?`);
    scope.states[name] = {
      Type: 'Choice', Comment: this.comment(step, `after '${from}'`),
      Choices: [{ Condition: `{% $${runs} >= ${max} %}`, Next: tooMany }], Default: next,
    };
    return name;
  }

  private lowerHandoff(step: IrStep, scope: Scope, v: string): Frag {
    const c = step.composite ?? {};
    const specialists = c.specialists ?? [];
    const max = c.maxHandoffs ?? 3;
    const entryName = this.stepNames.get(step)!;
    const route = this.helper(step, 'route');
    const last = this.names.variable(`${v}_last`);
    const hops = this.names.variable(`${v}_handoffs`);
    const input = step.input ? this.field(step.input, scope, step) : undefined;
    const entry = this.agentTask(step, scope, c.entry ?? { agent: 'entry', role: 'entry', identity: step.identity }, entryName,
      { task: input ?? null }, { [last]: `{% ${RESULT_VALUE} %}`, [hops]: 0 });
    entry.Next = route;
    // The role an agent transfers to: `{"handoff": "<role>"}` (or `transfer_to`) in its output.
    const roleOf = `( $o := $${last}; $type($o) = "object" ? ($exists($o.handoff) ? $o.handoff : $o.transfer_to) : null )`;
    const choices: Record<string, unknown>[] = specialists.map((s) => {
      const sName = this.helper(step, s.role);
      const st = this.agentTask(step, scope, s, sName, { task: input ?? null, handoff: `{% $${last} %}` },
        { [last]: `{% ${RESULT_VALUE} %}`, [hops]: `{% $${hops} + 1 %}` }, [...scope.iterVars, hops]);
      st.Next = route;
      return { Condition: `{% $${hops} < ${max} and ${roleOf} = ${JSON.stringify(s.role)} %}`, Next: sName };
    });
    const done: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: `{% $${last} %}` } };
    scope.states[route] = {
      Type: 'Choice',
      Comment: this.comment(step, `hand off to ${specialists.map((s) => s.role).join(', ') || 'nobody'} (at most ${max} hand-offs)`),
      Choices: [...choices, done],
    };
    return { entry: entryName, tails: [{ holder: done, field: 'rule' }] };
  }
}

/**
 * `expr` evaluated at a terminal state: variables that state assigns are not visible in its own
 * Output, so each is replaced by the expression it is assigned.
 */
function valueOf(expr: string, assigns: Record<string, unknown>): string {
  let out = expr;
  for (const [name, a] of Object.entries(assigns)) out = replaceVariable(out, name, asJsonata(a));
  return out;
}

/** An Assign value as one JSONata expression: `{% e %}` leaves become `(e)`, objects are rebuilt, the rest is JSON. */
function asJsonata(v: unknown): string {
  if (typeof v === 'string') return v.startsWith('{%') && v.endsWith('%}') ? `(${v.slice(2, -2).trim()})` : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(asJsonata).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${asJsonata(x)}`).join(', ')}}`;
  return JSON.stringify(v ?? null);
}

/** The agent loop whose exit every one of `tails` is, if they all are one loop's. */
function loopClosedBy(tails: readonly Tail[]): IrStep | undefined {
  const loop = tails[0]?.loop;
  return loop !== undefined && tails.every((t) => t.loop === loop) ? loop : undefined;
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

/**
 * Replaces every `$name` (the whole variable name, not a prefix of a longer one, and not text inside a
 * string literal: a prompt may well say "$input") in a JSONata text.
 */
function replaceVariable(expr: string, name: string, replacement: string): string {
  // An indexOf scan rather than a RegExp: it runs for every export of every branch, and the
  // regex replace was most of that time. Quotes are tracked only up to each occurrence.
  const token = `$${name}`;
  let at = expr.indexOf(token);
  if (at < 0) return expr;
  let out = '';
  let from = 0;
  let quote = 0;
  let scanned = 0;
  for (; at >= 0; at = expr.indexOf(token, at + 1)) {
    for (; scanned < at; scanned++) {
      const c = expr.charCodeAt(scanned);
      if (quote !== 0) {
        if (c === 92) scanned++; // a backslash escapes the next character
        else if (c === quote) quote = 0;
      } else if (c === 34 || c === 39 || c === 96) quote = c; // " ' and ` (a quoted field name)
    }
    if (quote !== 0 || scanned > at || isNameChar(expr.charCodeAt(at + token.length))) continue;
    out += expr.slice(from, at) + replacement;
    from = at + token.length;
  }
  return from === 0 ? expr : out + expr.slice(from);
}

/** [A-Za-z0-9_] (NaN past the end is not). */
function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/**
 * The read steps a model handler appends as context: those whose name the prompt template does
 * not mention (the rule handlers applied to envelope version 1 themselves, now decided here).
 */
function unplacedReads(step: IrStep, config: Readonly<Record<string, unknown>>): string[] {
  const template = step.input?.kind === 'template' && typeof step.input.value === 'string' && hasExpression(step.input.value)
    ? step.input.value
    : typeof config.prompt === 'string' ? config.prompt : '';
  return allReads(step).filter((name) => !mentions(template, name));
}

/** `new RegExp(`\\b${escaped name}\\b`).test(text)`, without building a RegExp per name and step. */
function mentions(text: string, name: string): boolean {
  if (name.length === 0) return false;
  // `\w` is isNameChar; past either end of the text is not a word character.
  const first = isNameChar(name.charCodeAt(0));
  const last = isNameChar(name.charCodeAt(name.length - 1));
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const startOk = first !== isNameChar(text.charCodeAt(at - 1));
    const endOk = last !== isNameChar(text.charCodeAt(at + name.length));
    if (startOk && endOk) return true;
  }
  return false;
}

/** Whether the step's input value may be null or absent at run time (then a handler falls back to `inputs.input`). */
function mayBeNull(step: IrStep, extraValue: unknown, parse: (text: string) => Template): boolean {
  if (extraValue !== undefined) return extraValue === null || typeof extraValue === 'string';
  const e = step.input;
  if (e === undefined || e.kind === 'jsonata') return true;
  if (typeof e.value === 'string') return hasExpression(e.value) && parse(e.value).whole;
  return e.value === null || e.value === undefined;
}

/** A copy of `o` without `keys` (the same object when none is present). */
function omit(o: Readonly<Record<string, unknown>>, ...keys: string[]): Record<string, unknown> {
  if (!keys.some((k) => k in o)) return o as Record<string, unknown>;
  // Copied key by key rather than spread and deleted from: a delete turns the copy into a slow
  // dictionary object, which every chain model step's config in the definition then was.
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (!keys.includes(k)) out[k] = o[k];
  return out;
}

/** Every step id a step's expressions read (input, guard, items, condition); memoised, since collecting readers and building each payload both ask. */
export function allReads(step: IrStep): readonly string[] {
  let reads = ALL_READS.get(step);
  if (reads !== undefined) return reads;
  const out = new Set<string>();
  for (const e of [step.input, step.when, step.expr, step.composite?.items, step.composite?.condition]) {
    if (e) for (const r of e.reads) if (r !== step.id) out.add(r);
  }
  ALL_READS.set(step, (reads = [...out]));
  return reads;
}

const ALL_READS = new WeakMap<IrStep, readonly string[]>();

/** Whether any step of `wf` (its bodies included) reads step `id` (its input, guard, condition or items). */
function workflowReads(wf: IrWorkflow, id: string): boolean {
  return wf.steps.some((s) => {
    const c = s.composite;
    return [s.input, s.when, s.expr, c?.items, c?.condition].some((e) => e?.reads.includes(id)) || (c?.body !== undefined && workflowReads(c.body, id));
  });
}

/** JSONata for a value as prompt text: a string as it is, null or missing as blank, anything else as JSON. */
function asText(jsonata: string): string {
  return `( $o := ${jsonata}; $exists($o) and $type($o) != "null" ? ($type($o) = "string" ? $o : $string($o)) : "" )`;
}

/** The variables of a conversation whose tool calls one step hands to another (see lowerRouted). */
interface TurnVariables {
  readonly turn: string;
  readonly calls: string;
  readonly results: string;
  readonly reply: string;
}
