// What every step kind's lowering (lower/steps/<kind>.ts) works with: the fragments and scopes the
// orchestrator links, and the plumbing it offers (state names, expressions, the envelope, Task
// states with their Retry and Catch, init Passes, the Fail state). A kind never reaches into the
// orchestrator or another kind; what two kinds share is here.
import type { LambdaStepKind } from '@stepforge/contract';
import type { PathRoot, Template } from '../expr/ExpressionAst.js';
import type { IrAgentRef, IrDocument, IrExpr, IrStep, IrWorkflow } from '../ir/Ir.js';
import type { LayeredMap } from './LayeredMap.js';
import type { NameAllocator } from './NameAllocator.js';

/** One ASL state, as plain JSON. */
export type AslState = Record<string, unknown>;

/** Error names the compiled ASL raises itself. */
export const BUDGET_EXCEEDED = 'BudgetExceeded';
/** The error the model handler raises when a consensus judge's answer is not a candidate verbatim. */
export const JUDGE_NOT_CANDIDATE = 'JudgeChoiceNotCandidate';

/**
 * How a Lambda step's result becomes its value: `output`, which handlers set to `{"$ref": outputRef}`
 * when the output is stored by reference (see StepResult).
 */
export const RESULT_VALUE = '$states.result.output';
/** `{% $states.result.output %}`, the Assign value of every plain Task, as one shared string. */
export const RESULT_VALUE_LEAF = `{% ${RESULT_VALUE} %}`;

/** A transition still to fill. */
export interface Tail {
  readonly holder: Record<string, unknown>;
  /** `Next`: a normal state (may End); `rule`: a Choice rule; `Default`: a Choice's default. */
  readonly field: 'Next' | 'rule' | 'Default';
  /** The agent loop step whose exit this is (its "done" rule): a Pass that only closes it belongs to that step. */
  readonly loop?: IrStep;
}

/** What lowering a step (or a control node) produced: where to enter it and the transitions leaving it. */
export interface Frag {
  readonly entry: string;
  readonly tails: Tail[];
  /**
   * Constant variables to set on the way in (loop counters). Every state that leads here assigns
   * them itself, which saves an init Pass (one transition per entry); where nothing can (a
   * branch's StartAt, a Choice's Default), `materialize` adds that Pass and returns its name.
   */
  readonly init?: { readonly assign: Record<string, unknown>; readonly materialize: () => string };
}

/**
 * The fragment of one state left by its `Next`. Assigned onto `{}` and `new Array()` rather than
 * written as literals with fields: V8 pretenures the allocation site of a literal whose objects
 * outlive a scavenge, as the lowering's do, and pretenured objects stay in the old space until a
 * mark-compact, on fresh pages each time (see docs/performance.md).
 */
export function nextFrag(entry: string, holder: AslState): Frag {
  const tail = {} as { holder: AslState; field: 'Next' };
  tail.holder = holder;
  tail.field = 'Next';
  const tails = new Array<Tail>();
  tails.push(tail);
  const frag = {} as { entry: string; tails: Tail[] };
  frag.entry = entry;
  frag.tails = tails;
  return frag;
}

/** Where states are being written: the state machine, a Parallel branch, a Map iteration. */
export interface Scope {
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

/** The variables of a conversation whose tool calls one step hands to another (see a routed workflow). */
export interface TurnVariables {
  readonly turn: string;
  readonly calls: string;
  readonly results: string;
  readonly reply: string;
}

/** What the envelope of a Lambda step may override (see LowerContext.payload). */
export interface PayloadExtra {
  kind?: LambdaStepKind;
  role?: string;
  identity?: string;
  config?: Record<string, unknown>;
  value?: unknown;
  iterVars?: readonly string[];
  turn?: unknown;
  toolCall?: unknown;
  budget?: unknown;
}

/** The plumbing a step kind's lowering receives. */
export interface LowerContext {
  readonly doc: IrDocument;
  /** State and variable names, unique in the state machine. */
  readonly names: NameAllocator;
  /** Each step's own state name (claimed up front). */
  readonly stepNames: Map<IrStep, string>;
  /** Each step's states, its own first (what `--explain` and the manifest list). */
  readonly stepStates: Map<IrStep, string[]>;

  /** A helper state of `step`, named `<step>: <suffix>` and listed among its states. */
  helper(step: IrStep, suffix: string): string;
  /** Throws the named compile error at the step (or the document). */
  fail(code: string, message: string, step: IrStep | undefined, hint?: string): never;
  /** `<kind> '<id>' @ file:line:col[: what]`: every state's Comment. */
  comment(step: IrStep, what?: string): string;

  /** A step lowered with its `when` guard and its output registered in the scope (a nested step). */
  lowerStep(step: IrStep, scope: Scope, v?: string): Frag;
  /** A workflow body (scheduled into sequence and Parallel states) lowered into `scope`. */
  lowerWorkflowBody(wf: IrWorkflow, scope: Scope, top: boolean): Frag | undefined;
  /** An agent loop (reason → tool calls → back) for a step granted tools. */
  lowerAgentLoop(step: IrStep, scope: Scope, v: string): Frag;
  /** JSONata for a workflow body's result in `scope`. */
  resultExpr(wf: IrWorkflow, scope: Scope): string;

  /** Leads `tails` into `frag`, each tail assigning the fragment's init variables itself when it can. */
  connect(tails: readonly Tail[], frag: Frag): void;
  /** The state to start a fragment at when nothing leads into it (its init Pass, if it has init variables). */
  entryOf(frag: Frag): string;
  /** An init Pass created on demand (see Frag.init); the same one each time. */
  initPass(scope: Scope, name: () => string, comment: string, assign: () => Record<string, unknown>, next: string): () => string;
  /** Fills tails with `next`. */
  patch(tails: readonly Tail[], next: string): void;
  /** Ends a branch or iteration scope: every terminal state gets `End` and an `Output` built by `output`. */
  closeScope(frag: Frag, scope: Scope, output: (assigns: Record<string, unknown>) => string): void;
  /** The scope's Fail state (made on first use), which a failing step's Catch goes to. */
  failState(scope: Scope): string;
  /** A scope's first assign-only Pass folded into the Lambda Task after it, where that is safe. */
  foldEntryPass(states: Record<string, AslState>, passName: string): string;

  /** How a path root (`input`, `steps.x`) reads in `scope`. */
  resolveRoot(scope: Scope, step?: IrStep): (root: PathRoot) => string;
  /** An IrExpr as an ASL field value: static JSON stays as is, expressions become `{% … %}` leaves. */
  field(e: IrExpr | undefined, scope: Scope, step?: IrStep): unknown;
  /** An IrExpr as one JSONata expression (for Assign / Items / conditions). */
  valueJsonata(e: IrExpr, scope: Scope, step?: IrStep): string;
  /** An IrExpr as a JSONata truth value. */
  conditionJsonata(e: IrExpr | undefined, scope: Scope, step?: IrStep): string;
  /** A template's parse (shared with the front-end's). */
  parse(text: string): Template;

  /** The step envelope a Lambda receives. */
  payload(step: IrStep, scope: Scope, extra?: PayloadExtra): Record<string, unknown>;
  /** A Lambda Task with its Retry and its Catch into the scope's Fail state. */
  taskState(
    step: IrStep,
    scope: Scope,
    kind: LambdaStepKind,
    payload: Record<string, unknown>,
    assign: Record<string, unknown>,
    what: string | undefined,
  ): AslState;
  /** A Pass that assigns the step's variable. */
  lowerPass(step: IrStep, scope: Scope, v: string, jsonata: string, what: string): Frag;
  /** An agent's model Task (judge loops, analysts, hand-offs, SDK agents), written into `scope` as `stateName`. */
  agentTask(
    step: IrStep,
    scope: Scope,
    ref: IrAgentRef,
    stateName: string,
    value: unknown,
    assign: Record<string, unknown>,
    iterVars?: readonly string[],
  ): AslState;
  /** The one tool call inside an agent loop's Map over its calls. */
  toolCallState(
    step: IrStep,
    scope: Scope,
    iterScope: Scope,
    budget: { readonly maxTurns: number; readonly maxToolCalls: number },
    turnVar: string,
    callsVar: string,
    granted: 'task' | 'step',
  ): AslState;
}
