import { createVirtualClock } from '../interpreter/clocks.js';
import { matchesError } from '../interpreter/retryCatch.js';
import type { AslDefinition, ExecuteOptions, ExecutionResult, HistoryEvent } from '../interpreter/types.js';
import type { ExecuteFn, ValidateFn } from './ExecutionManager.js';
import { SfnApiError } from './SfnApiError.js';

/** What TestState runs on: the manager's interpreter, validator and task invoker. */
export interface TestStateDeps {
  readonly execute: ExecuteFn;
  readonly validate?: ValidateFn;
  /** Options every run gets (invoker, scope, role). */
  readonly baseOptions: Partial<ExecuteOptions>;
  /** Why the engine cannot run a Task resource, if it cannot (the manager's invoker). */
  readonly supports: (resource: string) => string | undefined;
}

type Obj = Record<string, unknown>;

const STATE_TYPES = new Set(['Task', 'Pass', 'Wait', 'Choice', 'Succeed', 'Fail', 'Parallel', 'Map']);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * TestState: runs one state on its own and says what it did — its output, the state it would go
 * to next, or the error it raised — without creating an execution. The state (with `stateName`,
 * the state of that name in a whole definition) runs as the first state of a machine whose other
 * states are pass-through stand-ins for the states it can go to, so Next, Choice rules, Default
 * and Catch targets are read from where the run ended. As on AWS, a Retry is not carried out: an
 * error a retrier matches ends the test as RETRIABLE; an error a catcher matches as CAUGHT_ERROR,
 * with the catcher's output and its Next. Waits end at once (a virtual clock).
 */
export async function testState(req: Obj, deps: TestStateDeps): Promise<Obj> {
  for (const field of ['mock', 'context', 'stateConfiguration'] as const) {
    if (req[field] !== undefined && req[field] !== null) {
      throw new SfnApiError(
        'ValidationException',
        `TestState in the embedded engine does not take '${field}': it runs the state with the engine's own task integrations and context; leave '${field}' out`,
      );
    }
  }
  const { state, queryLanguage } = stateOf(req);
  const type = state.Type;
  if (typeof type !== 'string' || !STATE_TYPES.has(type)) {
    throw new SfnApiError(
      'InvalidDefinition',
      `Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: the state's Type must be one of ${[...STATE_TYPES].join(', ')} (got ${JSON.stringify(type)})'`,
    );
  }
  if (type === 'Task' && typeof state.Resource === 'string' && /\.(sync(:2)?|waitForTaskToken)$/.test(state.Resource)) {
    throw new SfnApiError(
      'ValidationException',
      `TestState does not run '.sync' or '.waitForTaskToken' tasks (Resource '${state.Resource}'): test the request-response form of the task, or run the state machine`,
    );
  }
  const input = parseJson(req.input, 'input', 'InvalidExecutionInput') ?? {};
  const variables = parseJson(req.variables, 'variables', 'ValidationException');
  if (variables !== undefined && (variables === null || typeof variables !== 'object' || Array.isArray(variables))) {
    throw new SfnApiError('ValidationException', 'variables must be a JSON object of variable names and values');
  }
  for (const name of Object.keys((variables as Obj | undefined) ?? {})) {
    if (!VARIABLE_NAME.test(name))
      throw new SfnApiError(
        'ValidationException',
        `variables: '${name}' is not a variable name (letters, digits and '_', not starting with a digit)`,
      );
  }

  // The state under test keeps its own name when it has one, so `$$.State.Name` reads as on AWS.
  const targets = transitionTargets(state);
  const name = typeof req.stateName === 'string' && !targets.includes(req.stateName) ? req.stateName : pickName(targets);
  const { Retry: retry, ...tested } = state;
  const states: Obj = { [name]: tested };
  for (const t of targets)
    if (t !== name) states[t] = { Type: 'Pass', End: true, ...(queryLanguage === 'JSONata' ? { QueryLanguage: 'JSONata' } : {}) };
  let startAt = name;
  // The state that sets `variables` before the tested state runs.
  const prologue = pickName([...targets, name], 'TestStateVariables');
  let runInput: unknown = input;
  if (variables !== undefined && Object.keys(variables as Obj).length > 0) {
    // Variables come in through a Pass that assigns each from its own input field and hands the
    // state its real input: values are data, never evaluated as templates.
    const keys = Object.keys(variables as Obj);
    const assign: Obj = {};
    if (queryLanguage === 'JSONata') for (const k of keys) assign[k] = `{% $states.input.variables.${k} %}`;
    else for (const k of keys) assign[`${k}.$`] = `$.variables.${k}`;
    states[prologue] =
      queryLanguage === 'JSONata'
        ? { Type: 'Pass', Assign: assign, Output: '{% $states.input.input %}', Next: name }
        : { Type: 'Pass', Assign: assign, OutputPath: '$.input', Next: name };
    startAt = prologue;
    runInput = { variables, input };
  }
  const definition: AslDefinition = { ...(queryLanguage ? { QueryLanguage: queryLanguage } : {}), StartAt: startAt, States: states };
  const problems = [...(deps.validate?.(definition) ?? [])];
  for (const r of type === 'Task' && typeof state.Resource === 'string' ? [state.Resource] : []) {
    const why = deps.supports(r);
    if (why !== undefined) problems.push({ code: 'SCHEMA_VALIDATION_FAILED', message: why, path: `/States/${name}/Resource` });
  }
  if (problems.length > 0) {
    throw new SfnApiError(
      'InvalidDefinition',
      `Invalid State Machine Definition: '${problems.map((p) => `${p.code}: ${p.message} at ${p.path}`).join(', ')}'`,
    );
  }

  let result: ExecutionResult;
  try {
    result = await deps.execute(definition, runInput, {
      ...deps.baseOptions,
      clock: createVirtualClock(Date.now()),
      collectEvents: true,
      stateMachineType: 'EXPRESS',
      newTaskToken: () => 'test-state-token',
    });
  } catch (e) {
    // The interpreter refuses a definition it cannot run before the first state: the state's fault.
    throw new SfnApiError('InvalidDefinition', `Invalid State Machine Definition: '${e instanceof Error ? e.message : String(e)}'`);
  }
  const entered = result.events.filter((e) => e.type.endsWith('StateEntered')).map((e) => detail(e, 'stateEnteredEventDetails'));
  const next = entered.map((d) => d?.name).find((n, i) => i > 0 && n !== name && n !== prologue) as string | undefined;
  const caught = lastError(result.events);
  const inspectionData = inspection(result.events, name, input, state);
  const wantsInspection =
    req.inspectionLevel === undefined ||
    req.inspectionLevel === 'INFO' ||
    req.inspectionLevel === 'DEBUG' ||
    req.inspectionLevel === 'TRACE';

  if (result.status !== 'SUCCEEDED') {
    const error = result.error ?? 'States.Runtime';
    const retriable = Array.isArray(retry) && retry.some((r) => matchesError((r as Obj).ErrorEquals, error));
    return {
      status: retriable ? 'RETRIABLE' : 'FAILED',
      error,
      ...(result.cause !== undefined ? { cause: result.cause } : {}),
      ...(wantsInspection ? { inspectionData } : {}),
    };
  }
  if (caught && next !== undefined && catchTargets(state).has(next)) {
    const retriable = Array.isArray(retry) && retry.some((r) => matchesError((r as Obj).ErrorEquals, caught.error));
    return {
      status: retriable ? 'RETRIABLE' : 'CAUGHT_ERROR',
      error: caught.error,
      ...(caught.cause !== undefined ? { cause: caught.cause } : {}),
      ...(retriable ? {} : { output: JSON.stringify(result.output ?? null), nextState: next }),
      ...(wantsInspection ? { inspectionData } : {}),
    };
  }
  return {
    status: 'SUCCEEDED',
    output: JSON.stringify(result.output ?? null),
    ...(next !== undefined ? { nextState: next } : {}),
    ...(wantsInspection ? { inspectionData } : {}),
  };
}

/** The state to test: `definition` is the state itself, or with `stateName` a whole state machine. */
function stateOf(req: Obj): { state: Obj; queryLanguage?: string } {
  if (typeof req.definition !== 'string' || req.definition === '') {
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null",
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.definition);
  } catch (e) {
    throw new SfnApiError('InvalidDefinition', `Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: ${(e as Error).message}'`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SfnApiError(
      'InvalidDefinition',
      "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: the definition must be a JSON object'",
    );
  }
  const d = parsed as Obj;
  if (req.stateName === undefined) return { state: d, ...(typeof d.QueryLanguage === 'string' ? { queryLanguage: d.QueryLanguage } : {}) };
  const states = d.States as Obj | undefined;
  const state = typeof req.stateName === 'string' && states && typeof states === 'object' ? states[req.stateName] : undefined;
  if (state === null || typeof state !== 'object' || Array.isArray(state)) {
    throw new SfnApiError(
      'ValidationException',
      `stateName '${String(req.stateName)}' names no state of the definition (its states: ${Object.keys(states ?? {}).join(', ') || 'none'})`,
    );
  }
  const ql = (state as Obj).QueryLanguage ?? d.QueryLanguage;
  return { state: state as Obj, ...(typeof ql === 'string' ? { queryLanguage: ql } : {}) };
}

function parseJson(raw: unknown, field: string, errorType: string): unknown {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw new SfnApiError(errorType, `${field} must be a JSON text`);
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new SfnApiError(errorType, `${field === 'input' ? 'Invalid execution input' : `Invalid ${field}`}: ${(e as Error).message}`);
  }
}

/** Every state the tested state can go to. */
function transitionTargets(st: Obj): string[] {
  const out = new Set<string>();
  const add = (v: unknown) => typeof v === 'string' && out.add(v);
  add(st.Next);
  add(st.Default);
  for (const c of Array.isArray(st.Choices) ? st.Choices : []) add((c as Obj | null)?.Next);
  for (const t of catchTargets(st)) out.add(t);
  return [...out];
}

function catchTargets(st: Obj): Set<string> {
  const out = new Set<string>();
  for (const c of Array.isArray(st.Catch) ? st.Catch : []) {
    const n = (c as Obj | null)?.Next;
    if (typeof n === 'string') out.add(n);
  }
  return out;
}

/** `base`, or `base2`, `base3`… whichever no other state of the test machine has. */
function pickName(taken: readonly string[], base = 'TestState'): string {
  let name = base;
  for (let i = 2; taken.includes(name); i++) name = `${base}${i}`;
  return name;
}

function detail(e: HistoryEvent, key: string): Obj | undefined {
  const d = e[key];
  return d !== null && typeof d === 'object' ? (d as Obj) : undefined;
}

/** The last error an event reports (a task failure a catcher then caught). */
function lastError(events: readonly HistoryEvent[]): { error: string; cause?: string } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    for (const [k, v] of Object.entries(events[i]!)) {
      if (!k.endsWith('EventDetails') || v === null || typeof v !== 'object') continue;
      const { error, cause } = v as Obj;
      if (typeof error === 'string') return { error, ...(typeof cause === 'string' ? { cause } : {}) };
    }
  }
  return undefined;
}

/**
 * What the history shows of the state's data flow: its input, a task's raw result, and the result
 * after ResultPath where nothing (OutputPath, JSONata Output) changes it afterwards. Stages the
 * history does not show (after InputPath, Parameters, ResultSelector) are left out rather than guessed.
 */
function inspection(events: readonly HistoryEvent[], name: string, input: unknown, state: Obj): Obj {
  const out: Obj = { input: JSON.stringify(input) };
  const task = events.find((e) => /^(Task|LambdaFunction)Succeeded$/.test(e.type));
  const taskOutput = task
    ? (detail(task, 'taskSucceededEventDetails') ?? detail(task, 'lambdaFunctionSucceededEventDetails'))?.output
    : undefined;
  if (taskOutput !== undefined) out.result = typeof taskOutput === 'string' ? taskOutput : JSON.stringify(taskOutput);
  const exited = events.find((e) => e.type.endsWith('StateExited') && detail(e, 'stateExitedEventDetails')?.name === name);
  const exitedOutput = exited ? detail(exited, 'stateExitedEventDetails')?.output : undefined;
  const plainOutput = state.OutputPath === undefined && state.Output === undefined && state.QueryLanguage !== 'JSONata';
  if (exitedOutput !== undefined && plainOutput)
    out.afterResultPath = typeof exitedOutput === 'string' ? exitedOutput : JSON.stringify(exitedOutput);
  return out;
}
