// IR → ASL (JSONata + Assign). Each step becomes a fragment of states with an entry and "tails"
// (the Next fields still to fill); a sequence patches tails to the next entry, a Parallel lowers each
// branch into its own scope and copies the branch outputs into fresh variables, because an inner scope
// can read but never write the outer scope's variables.
import {
  StepforgeError,
  ENVELOPE_VERSION,
  ITERATION_INLINE_OUTPUT_MAX_BYTES,
  RUN_META_KEY,
  type LambdaStepKind,
} from '@stepforge/contract';
import { hasExpression, literalText, parseTemplate } from '../expr/parseTemplate.js';
import { templateToJsonata } from '../expr/templateToJsonata.js';
import { withJsonataHelpers } from '../expr/jsonataHelpers.js';
import type { PathRoot, Template } from '../expr/ExpressionAst.js';
import type { IrAgentRef, IrControl, IrDocument, IrExpr, IrRoute, IrStep, IrWorkflow } from '../ir/Ir.js';
import { CONTENOX_ERRORS, CONTENOX_FIRST_INPUT, CONTENOX_NO_TRANSITION, edgeCounterVariable } from '../ir/contenoxToIr.js';
import { scheduleDag } from '../ir/scheduleDag.js';
import { LayeredMap } from './LayeredMap.js';
import { NameAllocator, asciiOnly } from './NameAllocator.js';
import type { CheckFinding } from '../checks/CheckFinding.js';
import { duplicateStateName, MAX_STATE_NAME, nonAsciiStateName, reservedStateName, stateNameTooLong } from '../checks/quotas/stateName.js';
import { routesOnItsAgents, stateReadSteps } from './stateReadSteps.js';
import { renderRetry } from './renderRetry.js';
import { kindResource } from './kindResource.js';
import {
  nextFrag,
  type AslState,
  type Frag,
  type LowerContext,
  type PayloadExtra,
  type Scope,
  type Tail,
  type TurnVariables,
} from './LowerContext.js';
import { replaceVariable, valueOf, mentions } from './jsonataText.js';
import { foldEntryPass, foldStartIntoParallel } from './optimize/foldPasses.js';
import { lowerAgentLoop } from './steps/agentLoop.js';
import { lowerCodeGraph } from './steps/codeGraph.js';
import { lowerConditional } from './steps/conditional.js';
import { lowerForEach } from './steps/forEach.js';
import { lowerHandedOverCalls, lowerHandedOverTurn } from './steps/handedOverToolCalls.js';
import { lowerHandoff } from './steps/handoffRouter.js';
import { lowerJudgeLoop } from './steps/judgeLoop.js';
import { lowerAnalyzer } from './steps/parallelAnalyzer.js';
import { lowerPure } from './steps/pure.js';
import { lowerSdk } from './steps/sdkFlow.js';
import { lowerTask } from './steps/task.js';
import { lowerWhile } from './steps/while.js';

export { BUDGET_EXCEEDED, JUDGE_NOT_CANDIDATE, type AslState } from './LowerContext.js';

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
/**
 * Plain Lambda steps name the function itself as the Resource (`${ModelStepFunctionArn}`, filled by
 * DefinitionSubstitutions): the state's result is then the handler's answer, with no Invoke envelope
 * (`FunctionName`, `Payload`) in the definition or the result — about 70 bytes less per Task, which
 * is what keeps a 1,000-step workflow well under the 1 MB definition quota.
 */
const LAMBDA_INVOKE_CALLBACK_BASE = 'arn:aws:states:::lambda:invoke';
/** The envelope's `attempt`: which try of its state this call is (see StepEnvelope.attempt). */
const ATTEMPT = '{% $states.context.State.RetryCount %}';
/**
 * Tool calls invoke the tool Lambda with `.waitForTaskToken`: a call that policy gates waits for a
 * human (the runtime records the approval, announces it on SQS and answers the token when someone
 * decides); any other call is answered through the token at once. The result is then the answer
 * itself, as for a function-ARN Task.
 */
const LAMBDA_INVOKE_CALLBACK = `${LAMBDA_INVOKE_CALLBACK_BASE}.waitForTaskToken`;
/** What `payload` is called with when nothing of the envelope is overridden (one object, not one per Task). */
const NO_EXTRA: PayloadExtra = Object.freeze({});
/** The config field a model step's rendered prompt replaces (see payload). */
const PROMPT_KEY: readonly string[] = ['prompt'];
/** Config fields a model or tool envelope carries as `budget` instead. */
const TURN_LIMIT_KEYS: readonly string[] = ['max_turns', 'max_tool_calls'];
/** A step no step reads. */
const NO_READERS: readonly string[] = [];
/** A Task's Catch matches every error: one frozen list shared by every Task (see TRANSIENT_RETRIER). */
const CATCH_ALL: readonly string[] = Object.freeze(['States.ALL']);
/** How long a gated tool call may wait: a little over the runtime's default approval timeout (24 h), whose expiry denies first. */
const CALLBACK_TIMEOUT_SECONDS = 24 * 3600 + 300;

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

/** Lowers a whole IR document to an ASL definition. Throws StepforgeError on what ASL cannot express. */
export function lowerWorkflow(doc: IrDocument, options: { express?: boolean } = {}): LoweredWorkflow {
  return new Lowerer(doc, options).run();
}

class Lowerer implements LowerContext {
  readonly names = new NameAllocator();
  readonly stepNames = new Map<IrStep, string>();
  readonly stepStates = new Map<IrStep, string[]>();
  private readonly parents = new Map<IrStep, IrStep>();
  private readonly addedEdges: [string, string][] = [];
  private slowdown = 1;
  private stateReads: ReadonlySet<string> = new Set();

  constructor(
    readonly doc: IrDocument,
    private readonly options: { express?: boolean },
  ) {}

  run(): LoweredWorkflow {
    this.reserveStepNames(this.doc.workflow, undefined);
    this.collectReaders(this.doc.workflow);
    // What the front-end parsed already (the same parse of the same text) is not parsed again.
    for (const t of this.doc.templates ?? []) this.templates.set(t.text, t);
    this.stateReads = stateReadSteps(this.doc.workflow, (t) => this.parse(t));
    this.names.claimState(START_STATE) || this.failWith(reservedStateName(START_STATE), undefined);
    const outputName = this.names.state(OUTPUT_STATE);
    const top: Scope = {
      label: this.doc.name,
      top: true,
      states: {},
      env: new LayeredMap<string>(),
      inputVar: '$input',
      iterVars: [],
      produced: [],
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
    const outputComment = this.doc.workflow.output ? 'The workflow result (output:)' : "The workflow result: the last step's output";
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
    let startAt = body && !body.init ? foldEntryPass(top.states, START_STATE) : START_STATE;
    if (startAt === START_STATE && body && !body.init)
      startAt = foldStartIntoParallel(top.states, START_STATE, (name) => this.names.variable(name));
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
    collectStateNames(ordered, emitted);
    // Most steps keep every state they were given: their list is kept, not copied.
    for (const [step, names] of this.stepStates) {
      let kept = true;
      for (let i = 0; i < names.length && kept; i++) kept = emitted.has(names[i]!);
      if (!kept)
        this.stepStates.set(
          step,
          names.filter((n) => emitted.has(n)),
        );
    }
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
   * Step id → ids of the steps that read it (a reader may be listed twice: only the smallest and
   * largest position count); plus steps every scope end must see (results, output reads). Arrays,
   * not a Set per step: a 1,000-step document made a thousand Sets for two comparisons each.
   */
  private readonly readers = new Map<string, string[]>();
  private readonly alwaysExport = new Set<string>();

  private collectReaders(wf: IrWorkflow, owner?: string): void {
    const result = wf.steps[wf.resultStep ?? wf.steps.length - 1];
    if (result) this.alwaysExport.add(result.id);
    for (const r of wf.output?.reads ?? []) this.alwaysExport.add(r);
    for (const step of wf.steps) {
      // A read from inside a loop body counts as a read by the loop step itself (what runs in the outer scope).
      for (const r of allReads(step)) {
        let readers = this.readers.get(r);
        // `new Array()`, not `[]`: an array literal's site is one V8 may pretenure (see payload).
        if (readers === undefined) this.readers.set(r, (readers = new Array<string>()));
        readers.push(step.id);
        if (owner !== undefined) readers.push(owner);
      }
      if (step.composite?.body) this.collectReaders(step.composite.body, owner ?? step.id);
      // A while's step read by the next iteration is kept after its body (see lowerWhile), wherever it ran.
      const carried = step.composite?.carried;
      if (carried !== undefined) for (const id of carried) this.alwaysExport.add(id);
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
    const readers = this.readers.get(stepId) ?? NO_READERS;
    for (let i = 0; i < readers.length; i++) {
      const at = layout.position.get(readers[i]!);
      if (at === undefined) {
        // A reader outside this workflow is outside every branch of it.
        min = -Infinity;
        max = Infinity;
        break;
      }
      if (at < min) min = at;
      if (at > max) max = at;
    }
    const made = {} as { min: number; max: number };
    made.min = min;
    made.max = max;
    layout.spans.set(stepId, made);
    return made;
  }

  private layout(wf: IrWorkflow, control: IrControl): void {
    const position = new Map<string, number>();
    const ranges = new Map<IrControl, readonly [number, number]>();
    layOut(wf, control, 0, position, ranges);
    this.layouts.set(wf, { position, ranges, spans: new Map() });
  }

  // ---- names -------------------------------------------------------------------------------

  /** Claims every step's own state name up front, so helper states never take a source name. */
  private reserveStepNames(wf: IrWorkflow, parent: IrStep | undefined): void {
    for (const step of wf.steps) {
      if (parent) this.parents.set(step, parent);
      const ascii = nonAsciiStateName(step.id);
      if (ascii) this.failWith(ascii, step);
      let name = step.id;
      if (this.names.hasState(name) && parent) name = `${this.stepNames.get(parent) ?? parent.id}/${step.id}`;
      const long = stateNameTooLong(step.id, name);
      if (long) this.failWith(long, step);
      if (!this.names.claimState(name)) this.failWith(duplicateStateName(step.id, name), step);
      this.stepNames.set(step, name);
      const states = new Array<string>();
      states.push(name);
      this.stepStates.set(step, states);
      const body = step.composite?.body;
      if (body) this.reserveStepNames(body, step);
    }
  }

  helper(step: IrStep, suffix: string): string {
    const base = this.stepNames.get(step)!;
    const room = MAX_STATE_NAME - suffix.length - 2;
    const name = this.names.state(`${base.length > room ? base.slice(0, room) : base}: ${suffix}`);
    this.stepStates.get(step)!.push(name);
    return name;
  }

  /** Throws a check's finding about `step` (or the whole workflow). */
  private failWith(finding: CheckFinding, step: IrStep | undefined): never {
    return this.fail(finding.code, finding.message, step, finding.hint);
  }

  fail(code: string, message: string, step: IrStep | undefined, hint?: string): never {
    throw new StepforgeError(code, message, {
      location: step?.location ?? (this.doc.file ? { file: this.doc.file, line: 1, column: 1 } : undefined),
      source: this.doc.source,
      hint,
      details: step ? { step: step.id } : undefined,
    });
  }

  // ---- structure ---------------------------------------------------------------------------

  /** Schedules a workflow's DAG and lowers it into `scope`; returns undefined for an empty body. */
  lowerWorkflowBody(wf: IrWorkflow, scope: Scope, top: boolean): Frag | undefined {
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
    for (const r of routes)
      for (const b of r.branches)
        if (b.edge && b.edge[1] !== 'end') counters.set(`${b.edge[0]}>${b.edge[1]}`, edgeCounterVariable(b.edge[0], b.edge[1]));
    // A step's text may read a count no branch asks about (Contenox's `{{edge_count:FROM->TO}}`).
    for (const [from, to] of wf.countedEdges ?? []) counters.set(`${from}>${to}`, edgeCounterVariable(from, to));
    const init: Record<string, unknown> = { prev: `{% ${CONTENOX_FIRST_INPUT} %}` };
    for (const v of vars) init[v] = null;
    for (const c of counters.values()) init[c] = 0;
    if (wf.keepsErrors) init[CONTENOX_ERRORS] = {};
    // A model step that hands its tool calls over keeps its conversation's counters in variables
    // the step that runs the calls advances (see lowerHandedOverTurn / lowerHandedOverCalls).
    const turns = new Map<string, TurnVariables>();
    wf.steps.forEach((s, i) => {
      if (!s.handsOverToolCalls) return;
      const t: TurnVariables = {
        turn: this.names.variable(`${vars[i]}_turn`),
        calls: this.names.variable(`${vars[i]}_calls`),
        results: this.names.variable(`${vars[i]}_results`),
        reply: this.names.variable(`${vars[i]}_reply`),
      };
      turns.set(s.id, t);
      Object.assign(init, { [t.turn]: 0, [t.calls]: 0, [t.results]: [], [t.reply]: null });
    });
    this.routedInit = init;
    const frags = wf.steps.map((s, i) => {
      if (s.handsOverToolCalls) return lowerHandedOverTurn(this, s, scope, vars[i]!, turns.get(s.id)!);
      const of = s.runsToolCallsOf !== undefined ? wf.steps.find((x) => x.id === s.runsToolCallsOf) : undefined;
      if (of !== undefined) return lowerHandedOverCalls(this, s, scope, vars[i]!, of, turns.get(of.id)!);
      return this.lowerStep(s, scope, vars[i]);
    });
    const entries = frags.map((f) => this.entryOf(f));
    const endTails: Tail[] = [];
    wf.steps.forEach((step, i) => {
      const route = routes[i]!;
      const v = `$${vars[i]}`;
      // Taking on_failure traverses the edge to the handler, which Contenox counts like any other.
      const failureCounter = route.onFailure !== undefined ? counters.get(`${i}>${route.onFailure}`) : undefined;
      const countFailure: Record<string, string> = failureCounter !== undefined ? { [failureCounter]: `{% $${failureCounter} + 1 %}` } : {};
      // Contenox keeps the error for the tasks after it: `last_error` and `<task id>_error`, each the
      // text "task <id>: <error>" (the error's cause, else its name).
      const keepError = (error: string): Record<string, string> => {
        if (!wf.keepsErrors) return {};
        const text = `${JSON.stringify(`task ${step.id}: `)} & ${error}`;
        return {
          [CONTENOX_ERRORS]: `{% ( $t := ${text}; $merge([$${CONTENOX_ERRORS}, {"last_error": $t, ${JSON.stringify(`${step.id}_error`)}: $t}]) ) %}`,
        };
      };
      if (route.onFailure !== undefined) {
        for (const name of this.stepStates.get(step) ?? []) {
          const st = scope.states[name];
          if (st?.Catch)
            st.Catch = [
              {
                ErrorEquals: ['States.ALL'],
                Assign: {
                  prev: '{% $states.errorOutput %}',
                  ...countFailure,
                  ...keepError(
                    '($c := $states.errorOutput.Cause; $type($c) = "string" and $c != "" ? $c : $string($states.errorOutput.Error))',
                  ),
                },
                Next: entries[route.onFailure]!,
              },
            ];
        }
      }
      if (route.raise !== undefined && route.onFailure !== undefined) {
        // A raised error is a task failure like any other: on_failure takes it, with the error
        // (shaped as a caught one) as the handler's input.
        const name = this.helper(step, 'raise_error');
        scope.states[name] = {
          Type: 'Pass',
          Comment: this.comment(step, 'raise_error: the error goes to the on_failure task'),
          Assign: {
            prev: `{% {"Error": ${JSON.stringify(route.raise)}, "Cause": $string(${v})} %}`,
            ...countFailure,
            ...keepError(`$string(${v})`),
          },
          Next: entries[route.onFailure]!,
        };
        this.patch(frags[i]!.tails, name);
        return;
      }
      if (route.raise !== undefined) {
        const name = this.helper(step, 'raise_error');
        scope.states[name] = {
          Type: 'Fail',
          Comment: this.comment(step, 'raise_error ends the run failed'),
          Error: route.raise,
          Cause: `{% $string(${v}) %}`,
        };
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
          case 'equals':
            cond = `$e = ${w}`;
            break;
          case 'contains':
            cond = `$contains($e, ${w})`;
            break;
          case 'starts_with':
            cond = `$substring($e, 0, $length(${w})) = ${w}`;
            break;
          case 'ends_with':
            cond = `$length($e) >= $length(${w}) and $substring($e, $length($e) - $length(${w})) = ${w}`;
            break;
          case 'edge_traversed_at_least':
            // An edge to `end` is never counted: its count is 0 whenever the rule is tried.
            cond =
              b.edge![1] === 'end' ? String(0 >= Number(b.when)) : `$${counters.get(`${b.edge![0]}>${b.edge![1]}`)!} >= ${Number(b.when)}`;
            break;
          default:
            cond = 'true';
        }
        const assign: Record<string, unknown> = { prev: `{% ${out} %}` };
        const counted = b.goto === 'end' ? undefined : counters.get(`${i}>${b.goto}`);
        if (counted !== undefined) assign[counted] = `{% $${counted} + 1 %}`;
        const rule: Record<string, unknown> = {
          Condition: b.operator === 'default' || b.operator === 'edge_traversed_at_least' ? `{% ${cond} %}` : `{% ( ${bind}; ${cond} ) %}`,
          Assign: assign,
        };
        if (b.goto === 'end') endTails.push({ holder: rule, field: 'rule' });
        else rule.Next = entries[b.goto]!;
        return rule;
      });
      const name = this.helper(step, 'route');
      const choice: Record<string, unknown> = {
        Type: 'Choice',
        Comment: this.comment(step, 'transition: the first branch that matches, in order'),
        Choices: rules,
      };
      if (!branches.some((b) => b.operator === 'default')) {
        // No branch matches and there is no default: the run fails, as Contenox's does, saying which
        // task and what value matched nothing (rather than the bare States.NoChoiceMatched).
        const none = this.helper(step, 'no branch');
        scope.states[none] = {
          Type: 'Fail',
          Comment: this.comment(step, 'no branch matches and there is no default'),
          Error: CONTENOX_NO_TRANSITION,
          Cause: `{% ( ${bind}; ${JSON.stringify(`task '${step.id}': no matching transition found for eval: `)} & $string($e) ) %}`,
        };
        choice.Default = none;
      }
      scope.states[name] = choice;
      this.patch(frags[i]!.tails, name);
    });
    // Tasks no transition reaches never run: their states would be unreachable, which Step Functions refuses.
    const reached = new Set<number>([0]);
    for (const todo = [0]; todo.length > 0;) {
      const r = routes[todo.pop()!]!;
      for (const next of [...r.branches.map((b) => b.goto), r.onFailure]) {
        if (typeof next === 'number' && !reached.has(next)) {
          reached.add(next);
          todo.push(next);
        }
      }
    }
    wf.steps.forEach((step, i) => {
      if (reached.has(i)) return;
      for (const name of this.stepStates.get(step) ?? []) delete scope.states[name];
      this.stepStates.set(step, []);
    });
    // Every failure may have gone to an on_failure task: then no state leads to the Fail state.
    const fail = scope.failState;
    if (
      fail !== undefined &&
      routes.some((r) => r.onFailure !== undefined) &&
      !JSON.stringify(scope.states).includes(`"Next":${JSON.stringify(fail)}`)
    ) {
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
    // Lists made with `new Array()`, not `[]` (see payload): the branches live in the definition.
    const rendered = new Array<Record<string, unknown>>();
    // One variable receives the whole Parallel result; steps are read from it by branch and key.
    const result = this.names.variable(`par_${asciiOnly(this.controlLabel(branches[0]!, wf)).replace(/[^A-Za-z0-9_]/g, '')}`);
    const newEnv = new Array<[string, string]>();
    const carried = new Array<string>();
    // A loop, not forEach: an arrow made per Parallel would hold this body's optimised code, and
    // lose it at the next mark-compact (see scheduleDag's DagScheduler).
    for (let i = 0; i < branches.length; i++) {
      const branch = branches[i]!;
      // Assigned onto `{}` (see payload): a branch's scope and its states live until the Parallel is done.
      const inner = {} as { -readonly [K in keyof Scope]: Scope[K] };
      // Named after the branch's first steps: its Fail / join states read "<branch>: failed".
      inner.label = this.controlLabel(branch, wf);
      inner.states = {};
      inner.env = scope.env.child();
      inner.inputVar = scope.inputVar;
      inner.iterVars = scope.iterVars;
      inner.inMap = scope.inMap;
      inner.produced = new Array<Scope['produced'][number]>();
      const frag = this.lowerControl(branch, wf, inner)!;
      // Only values read after the Parallel (or results) leave the branch: keeps definitions small.
      const exports: Scope['produced'][number][] = [];
      for (const p of inner.produced) {
        for (let k = 0; k < p.steps.length; k++) {
          if (this.mustExport(p.steps[k]!, wf, branch)) {
            exports.push(p);
            break;
          }
        }
      }
      this.closeScope(frag, inner, (assigns) => exportsObject(exports, assigns));
      const rendering: Record<string, unknown> = {};
      rendering.StartAt = this.entryOf(frag);
      rendering.States = inner.states;
      rendered.push(rendering);
      for (const p of exports) {
        const outer = `$lookup($${result}[${i}], ${JSON.stringify(p.variable)})`;
        for (const stepId of p.steps) {
          const innerExpr = inner.env.get(stepId);
          if (innerExpr === undefined) continue;
          newEnv.push([stepId, replaceVariable(innerExpr, p.variable, outer)]);
          carried.push(stepId);
        }
      }
    }
    const state: AslState = {};
    state.Type = 'Parallel';
    state.Comment = `Runs ${branches.length} branches at once`;
    state.Branches = rendered;
    if (carried.length > 0) state.Assign = { [result]: '{% $states.result %}' };
    scope.states[name] = state;
    for (const [stepId, expr] of newEnv) scope.env.set(stepId, expr);
    if (carried.length > 0) {
      const produced = {} as { variable: string; steps: string[] };
      produced.variable = result;
      produced.steps = carried;
      scope.produced.push(produced);
    }
    return nextFrag(name, state);
  }

  /** Labels by control node: a Parallel asks for each branch's label several times, and for its nested Parallels' again. */
  private readonly labels = new Map<IrControl, string>();

  private controlLabel(c: IrControl, wf: IrWorkflow): string {
    let label = this.labels.get(c);
    if (label !== undefined) return label;
    if (c.type === 'step') label = asciiOnly(wf.steps[c.step]!.id);
    else if (c.type === 'sequence')
      label = c.items.length === 1 ? this.controlLabel(c.items[0]!, wf) : `${this.controlLabel(c.items[0]!, wf)} > ...`;
    else label = `[${c.branches.map((b) => this.controlLabel(b, wf)).join(' & ')}]`;
    this.labels.set(c, label);
    return label;
  }

  /** Leads `tails` into `frag`, each tail assigning the fragment's init variables itself when it can. */
  connect(tails: readonly Tail[], frag: Frag): void {
    const init = frag.init;
    if (init === undefined) return this.patch(tails, frag.entry);
    const clash = (t: Tail) =>
      t.field === 'Default' || Object.keys(init.assign).some((k) => k in ((t.holder.Assign as object | undefined) ?? {}));
    if (tails.some(clash)) return this.patch(tails, init.materialize());
    for (const t of tails) t.holder.Assign = { ...((t.holder.Assign as Record<string, unknown> | undefined) ?? {}), ...init.assign };
    this.patch(tails, frag.entry);
  }

  /** The state to start a fragment at when nothing leads into it (its init Pass, if it has init variables). */
  entryOf(frag: Frag): string {
    return frag.init ? frag.init.materialize() : frag.entry;
  }

  /** An init Pass created on demand (see Frag.init); the same one each time. */
  initPass(scope: Scope, name: () => string, comment: string, assign: () => Record<string, unknown>, next: string): () => string {
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
  patch(tails: readonly Tail[], next: string): void {
    for (const t of tails) {
      if (t.field === 'Default') t.holder.Default = next;
      else t.holder.Next = next;
    }
  }

  /**
   * Ends a branch / iteration scope: Choice tails go to a closing Pass; every terminal state gets
   * `End` and an `Output` built by `output(assignsOfThatState)`.
   */
  closeScope(frag: Frag, scope: Scope, output: (assigns: Record<string, unknown>) => string): void {
    const terminals: Record<string, unknown>[] = [];
    const choiceTails = frag.tails.filter((t) => t.field !== 'Next');
    if (choiceTails.length > 0) {
      const end = this.names.state(`${scope.label}: end`);
      // A Choice cannot end a branch: an agent loop that ends one needs this Pass, which is then its own state.
      const loop = loopClosedBy(choiceTails);
      if (loop !== undefined) this.stepStates.get(loop)!.push(end);
      const pass: AslState = {
        Type: 'Pass',
        Comment:
          loop !== undefined
            ? this.comment(loop, 'the agent loop is done; ends the branch with its output')
            : 'Joins the paths of this branch',
      };
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

  failState(scope: Scope): string {
    if (scope.failState === undefined) {
      const name = this.names.state(scope.top ? 'Failed' : `${scope.label}: failed`);
      const fail: AslState = {};
      fail.Type = 'Fail';
      if (scope.top) fail.Comment = "The run ends failed with the failing step's error; the cause names the step";
      fail.Error = '{% $states.input[1].Error %}';
      fail.Cause = '{% "step \'" & $states.input[0] & "\' failed: " & $states.input[1].Cause %}';
      scope.states[name] = fail;
      scope.failState = name;
    }
    return scope.failState;
  }

  // ---- expressions -------------------------------------------------------------------------

  resolveRoot(scope: Scope, step?: IrStep): (root: PathRoot) => string {
    return (root) => (root.kind === 'input' ? scope.inputVar : this.stepValue(scope, root.step, step));
  }

  /** How step `id`'s value reads in `scope` (what resolveRoot answers for it, without a closure and a root per read). */
  private stepValue(scope: Scope, id: string, reader?: IrStep): string {
    const v = scope.env.get(id);
    if (v === undefined) {
      this.fail(
        'unknown_step',
        `step '${id}' is not available here${reader ? ` (read by '${reader.id}')` : ''}`,
        reader,
        'a step can read steps that run before it in its own body or in an enclosing scope',
      );
    }
    return v;
  }

  /** A template string → JSONata (no `{% %}`), or a JSON literal when it holds no expression. */
  private templateJsonata(text: string, scope: Scope, mode: 'value' | 'condition', step?: IrStep): string {
    if (!hasExpression(text)) return mode === 'condition' ? String(text !== '') : JSON.stringify(literalText(text));
    return templateToJsonata(this.parse(text), { resolveRoot: this.resolveRoot(scope, step), mode, objectInput: true });
  }

  /** Parsed templates: a step's input is parsed for its value and again to see whether it may be null. */
  private readonly templates = new Map<string, Template>();

  parse(text: string): Template {
    let t = this.templates.get(text);
    if (t === undefined) this.templates.set(text, (t = parseTemplate(text)));
    return t;
  }

  /** An IrExpr as an ASL field value: static JSON stays as is, expressions become `{% … %}` leaves. */
  field(e: IrExpr | undefined, scope: Scope, step?: IrStep): unknown {
    if (e === undefined) return undefined;
    if (e.kind === 'jsonata') return `{% ${this.jsonataExpr(e, scope)} %}`;
    return this.fieldValue(e.value, scope, step);
  }

  /** field's walk over a template value (a method: a closure per step's input was one more object per Task). */
  private fieldValue(v: unknown, scope: Scope, step: IrStep | undefined): unknown {
    if (typeof v === 'string') return hasExpression(v) ? `{% ${this.templateJsonata(v, scope, 'value', step)} %}` : literalText(v);
    if (Array.isArray(v)) return v.map((x) => this.fieldValue(x, scope, step));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k in v)
        if (Object.prototype.hasOwnProperty.call(v, k)) out[k] = this.fieldValue((v as Record<string, unknown>)[k], scope, step);
      return out;
    }
    return v;
  }

  /** An IrExpr as one JSONata expression (for Assign / Items / conditions). */
  valueJsonata(e: IrExpr, scope: Scope, step?: IrStep): string {
    if (e.kind === 'jsonata') return this.jsonataExpr(e, scope);
    const walk = (v: unknown): string => {
      if (typeof v === 'string') return this.templateJsonata(v, scope, 'value', step);
      if (Array.isArray(v)) return `[${v.map(walk).join(', ')}]`;
      if (v !== null && typeof v === 'object')
        return `{${Object.entries(v)
          .map(([k, x]) => `${JSON.stringify(k)}: ${walk(x)}`)
          .join(', ')}}`;
      return JSON.stringify(v ?? null);
    };
    return walk(e.value);
  }

  conditionJsonata(e: IrExpr | undefined, scope: Scope, step?: IrStep): string {
    if (e === undefined) return 'true';
    if (e.kind === 'jsonata') return withJsonataHelpers(`$sfTruthy(${this.jsonataExpr(e, scope)})`);
    if (typeof e.value === 'string') return this.templateJsonata(e.value, scope, 'condition', step);
    return withJsonataHelpers(`$sfTruthy(${this.valueJsonata(e, scope, step)})`);
  }

  /** Raw JSONata (chain `pure`): `$` is the parents' outputs by handle, `$input` the workflow input. */
  private jsonataExpr(e: Extract<IrExpr, { kind: 'jsonata' }>, scope: Scope): string {
    const parents = e.reads.map((r) => `${JSON.stringify(r)}: ${this.stepValue(scope, r)}`).join(', ');
    const bindInput = scope.inputVar === '$input' ? '' : `$input := ${scope.inputVar}; `;
    return `( ${bindInput}{${parents}}.( ${e.jsonata} ) )`;
  }

  private readsObject(reads: readonly string[], scope: Scope): unknown {
    const seen = [...new Set(reads)];
    if (seen.length === 0) return {};
    return `{% {${seen.map((r) => `${JSON.stringify(r)}: ${this.stepValue(scope, r)}`).join(', ')}} %}`;
  }

  resultExpr(wf: IrWorkflow, scope: Scope): string {
    // A routed workflow's result is what its last step passed on.
    if (wf.routes) return '$prev';
    if (wf.output) return this.valueJsonata(wf.output, scope);
    const idx = wf.resultStep ?? wf.steps.length - 1;
    const step = wf.steps[idx];
    if (!step) return 'null';
    return this.stepValue(scope, step.id);
  }

  // ---- steps -------------------------------------------------------------------------------

  lowerStep(step: IrStep, scope: Scope, v = this.names.stepVariable(step.id)): Frag {
    let frag = this.lowerKind(step, scope, v);
    if (step.chooseFrom && step.chooseFrom.length > 0) frag = this.checkVerbatim(step, scope, frag);
    if (step.when) frag = this.guard(step, scope, v, frag);
    scope.env.set(step.id, `$${v}`);
    const steps = new Array<string>();
    steps.push(step.id);
    const produced = {} as { variable: string; steps: string[] };
    produced.variable = v;
    produced.steps = steps;
    scope.produced.push(produced);
    return frag;
  }

  /** The step's own lowering, by kind (lower/steps/<kind>.ts), before its guard and checks wrap it. */
  private lowerKind(step: IrStep, scope: Scope, v: string): Frag {
    switch (step.kind) {
      case 'pure':
        return lowerPure(this, step, scope, v);
      case 'conditional':
        return lowerConditional(this, step, scope, v);
      case 'for_each':
        return lowerForEach(this, step, scope, v);
      case 'while':
        return lowerWhile(this, step, scope, v);
      case 'judge_loop':
        return lowerJudgeLoop(this, step, scope, v);
      case 'parallel_analyzer':
        return lowerAnalyzer(this, step, scope, v);
      case 'handoff_router':
        return lowerHandoff(this, step, scope, v);
      case 'code_graph':
        return step.composite?.sdk ? lowerSdk(this, step, scope, v, step.composite.sdk) : lowerCodeGraph(this, step, scope, v);
      case 'model':
      case 'agent':
        return step.tools.length > 0 ? lowerAgentLoop(this, step, scope, v) : lowerTask(this, step, scope, v);
      default:
        return lowerTask(this, step, scope, v);
    }
  }

  lowerAgentLoop(step: IrStep, scope: Scope, v: string): Frag {
    return lowerAgentLoop(this, step, scope, v);
  }

  foldEntryPass(states: Record<string, AslState>, passName: string): string {
    return foldEntryPass(states, passName);
  }

  /** `<kind> '<id>' @ file:line:col[: what]` — repeated on every state, so kept short. */
  comment(step: IrStep, what?: string): string {
    const loc = step.location ? ` @ ${step.location.file ?? this.doc.file ?? 'source'}:${step.location.line}:${step.location.column}` : '';
    return `${step.kind} '${step.id}'${loc}${what ? `: ${what}` : ''}`;
  }

  lowerPass(step: IrStep, scope: Scope, v: string, jsonata: string, what: string): Frag {
    const name = this.stepNames.get(step)!;
    const state: AslState = { Type: 'Pass', Comment: this.comment(step, what), Assign: { [v]: `{% ${jsonata} %}` } };
    scope.states[name] = state;
    return nextFrag(name, state);
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
  payload(step: IrStep, scope: Scope, extra: PayloadExtra = NO_EXTRA): Record<string, unknown> {
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
      const nullable = (model || kind === 'function') && mayBeNull(step, extra.value, this);
      if (nullable) inputs.input = `{% ${scope.inputVar} %}`;
      // The prompt is sent rendered as `inputs.value`, always a string here, so the handler never reads `config.prompt`.
      if (model && extra.value === undefined && step.input?.kind === 'template' && typeof step.input.value === 'string' && !nullable)
        config = omit(config, PROMPT_KEY);
    }
    if (kind === 'model' || kind === 'tool') config = omit(config, TURN_LIMIT_KEYS);
    // The envelope and the Task state are assigned onto `{}` rather than written as literals with
    // fields: V8 pretenures the allocation site of a literal whose objects outlive a scavenge, as the
    // definition's do while it is built, and then every compile put them in the old space, where
    // they stay until a mark-compact, on fresh pages each time (see docs/performance.md).
    const stepField: Record<string, unknown> = {};
    stepField.id = step.id;
    stepField.kind = kind;
    stepField.identity = extra.identity ?? step.identity;
    // Empty lists are the schema defaults: left out to keep large definitions under 1 MB.
    if (iter.length > 0) stepField.iteration = `{% [${iter.map((x) => `$${x}`).join(', ')}] %}`;
    if (extra.role !== undefined) stepField.role = extra.role;
    const out: Record<string, unknown> = {};
    out.version = ENVELOPE_VERSION;
    out.run = '{% $run %}';
    out.step = stepField;
    out.config = config;
    out.inputs = inputs;
    out.attempt = ATTEMPT;
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

  taskState(
    step: IrStep,
    scope: Scope,
    kind: LambdaStepKind,
    payload: Record<string, unknown>,
    assign: Record<string, unknown>,
    what: string | undefined,
  ): AslState {
    const callback = kind === 'tool';
    const timeout = step.timeoutSeconds ?? (callback ? CALLBACK_TIMEOUT_SECONDS : undefined);
    // Fields set one by one onto `{}` (see payload; a spread in the middle of a literal also built
    // every Task through the slow generic copy, and the states it made were slower to serialise).
    const state = {} as AslState;
    state.Type = 'Task';
    state.Comment = this.comment(step, what);
    state.Resource = callback ? LAMBDA_INVOKE_CALLBACK : kindResource(kind);
    state.Arguments = callback
      ? { FunctionName: kindResource(kind), Payload: { ...payload, taskToken: '{% $states.context.Task.Token %}' } }
      : payload;
    if (timeout !== undefined) state.TimeoutSeconds = timeout;
    state.Assign = assign;
    state.Retry = renderRetry(step.retry);
    const catcher: Record<string, unknown> = {};
    catcher.ErrorEquals = CATCH_ALL;
    // [step id, error output]: the scope's Fail state turns it into the run's error and cause.
    catcher.Output = `{% [${JSON.stringify(step.id)}, $states.errorOutput] %}`;
    catcher.Next = this.failState(scope);
    const catchers = new Array<Record<string, unknown>>();
    catchers.push(catcher);
    state.Catch = catchers;
    return state;
  }

  /**
   * The one tool call inside an agent loop's Map over its calls: the tool Lambda, answered through a
   * task token, its result the iteration's output. `granted` names what holds the grants in the comment.
   */
  toolCallState(
    step: IrStep,
    scope: Scope,
    iterScope: Scope,
    budget: { readonly maxTurns: number; readonly maxToolCalls: number },
    turnVar: string,
    callsVar: string,
    granted: 'task' | 'step',
  ): AslState {
    const toolState = this.taskState(
      step,
      iterScope,
      'tool',
      this.payload(step, scope, {
        kind: 'tool',
        role: 'tool',
        value: undefined,
        toolCall: '{% $states.input %}',
        budget: {
          maxTurns: budget.maxTurns,
          maxToolCalls: budget.maxToolCalls,
          turnsUsed: `{% $${turnVar} %}`,
          toolCallsUsed: `{% $${callsVar} %}`,
        },
      }),
      {},
      `one tool call (tool Lambda, answered through a task token; the runtime refuses tools the ${granted} was not granted, and a gated call waits for a human)`,
    );
    delete toolState.Assign;
    toolState.Output = '{% $states.result %}';
    toolState.End = true;
    return toolState;
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

  agentTask(
    step: IrStep,
    scope: Scope,
    ref: IrAgentRef,
    stateName: string,
    value: unknown,
    assign: Record<string, unknown>,
    iterVars?: readonly string[],
  ): AslState {
    // The agent's own configuration travels with each call of it, as it does on an agent step.
    const config = {
      ...step.config,
      agent: ref.agent,
      role: ref.role,
      ...(ref.agentConfig ? { agentConfig: ref.agentConfig } : {}),
      ...(ref.focus !== undefined ? { focus: ref.focus } : {}),
    };
    const state = this.taskState(
      step,
      scope,
      'agent',
      this.payload(step, scope, {
        kind: 'agent',
        role: ref.role,
        identity: ref.identity,
        config,
        value,
        iterVars,
      }),
      assign,
      `agent '${ref.agent}' as ${ref.role}`,
    );
    scope.states[stateName] = state;
    return state;
  }

  // ---- the agent SDK (workflow, parallel, stateGraph) -----------------------------------------
}

/** The agent loop whose exit every one of `tails` is, if they all are one loop's. */
function loopClosedBy(tails: readonly Tail[]): IrStep | undefined {
  const loop = tails[0]?.loop;
  return loop !== undefined && tails.every((t) => t.loop === loop) ? loop : undefined;
}

/**
 * The read steps a model handler appends as context: those whose name the prompt template does
 * not mention (the rule handlers applied to envelope version 1 themselves, now decided here).
 */
function unplacedReads(step: IrStep, config: Readonly<Record<string, unknown>>): string[] {
  // Only what the step is given is its context: the steps a `when` guard or a loop's condition or
  // items read decide whether (or how often) it runs, and are not part of its prompt.
  const input = step.input;
  if (input === undefined) return [];
  // A JSONata prompt (a Contenox prompt_template) is the whole prompt, and places every step it reads;
  // a mapping or list input is rendered whole (as JSON) into the prompt: the steps it reads are in it.
  if (input.kind === 'jsonata' || typeof input.value !== 'string') return [];
  const template =
    input.kind === 'template' && typeof input.value === 'string' && hasExpression(input.value)
      ? input.value
      : typeof config.prompt === 'string'
        ? config.prompt
        : '';
  return input.reads.filter((name) => name !== step.id && !mentions(template, name));
}

/** Whether the step's input value may be null or absent at run time (then a handler falls back to `inputs.input`). */
function mayBeNull(step: IrStep, extraValue: unknown, templates: { parse(text: string): Template }): boolean {
  if (extraValue !== undefined) return extraValue === null || typeof extraValue === 'string';
  const e = step.input;
  if (e === undefined || e.kind === 'jsonata') return true;
  if (typeof e.value === 'string') return hasExpression(e.value) && templates.parse(e.value).whole;
  return e.value === null || e.value === undefined;
}

/** A copy of `o` without `keys` (the same object when none is present). */
function omit(o: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  let any = false;
  for (let i = 0; i < keys.length && !any; i++) any = keys[i]! in o;
  if (!any) return o as Record<string, unknown>;
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
  // Array.from, not a spread into a literal (a site V8 may pretenure; see payload): kept as long as the IR.
  ALL_READS.set(step, (reads = Array.from(out)));
  return reads;
}

const ALL_READS = new WeakMap<IrStep, readonly string[]>();

/**
 * Adds every state name of `states` and of the Branches and ItemProcessors in it to `out`. for…in
 * and indexed loops: a States map of a large workflow has thousands of keys, and a key array per map
 * and an iterator per state's Branches were most of this walk. This walk and layOut are functions,
 * not closures made per call: V8 drops a closure's optimised code with the closure (see scheduleDag's
 * DagScheduler).
 */
function collectStateNames(states: Record<string, AslState>, out: Set<string>): void {
  for (const k in states) {
    out.add(k);
    const st = states[k]!;
    const branches = st.Branches as { States: Record<string, AslState> }[] | undefined;
    if (branches !== undefined) for (let i = 0; i < branches.length; i++) collectStateNames(branches[i]!.States, out);
    const proc = st.ItemProcessor as { States: Record<string, AslState> } | undefined;
    if (proc) collectStateNames(proc.States, out);
  }
}

/**
 * Numbers the steps of `c` in execution order from `next`, recording each step's position (a
 * composite's inner steps at its own) and each control node's `[lo, hi)` range; returns the next number.
 */
function layOut(
  wf: IrWorkflow,
  c: IrControl,
  next: number,
  position: Map<string, number>,
  ranges: Map<IrControl, readonly [number, number]>,
): number {
  const lo = next;
  if (c.type === 'step') placeStep(wf.steps[c.step]!, next++, position);
  else for (const child of c.type === 'sequence' ? c.items : c.branches) next = layOut(wf, child, next, position, ranges);
  const range = new Array<number>() as unknown as [number, number];
  range.push(lo, next);
  ranges.set(c, range);
  return next;
}

function placeStep(step: IrStep, at: number, position: Map<string, number>): void {
  position.set(step.id, at);
  for (const inner of step.composite?.body?.steps ?? []) placeStep(inner, at, position);
}

/** A branch's result: the JSONata object of the values it exports, each as `assigns` leaves it. */
function exportsObject(exports: readonly { readonly variable: string }[], assigns: Record<string, unknown>): string {
  const members = new Array<string>();
  for (const p of exports) members.push(`${JSON.stringify(p.variable)}: ${valueOf(`$${p.variable}`, assigns)}`);
  return `{${members.join(', ')}}`;
}
