// A workflow written with the agent SDK (workflow, parallel, stateGraph): agents as model Tasks, the
// user's functions as function Tasks the handler resolves in the module.
import type { IrAgentRef, IrRetry, IrSdkAgent, IrSdkFlow, IrSdkStep, IrStep } from '../../ir/Ir.js';
import { stepIdentity } from '../../ir/stepIdentity.js';
import { RESULT_VALUE, type AslState, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

/**
 * An agent SDK workflow. Its agents are model Tasks named after them; the user's functions
 * (`when`, `transform`, graph nodes, `inputFn` / `mergeFn`, routers) are function Tasks the
 * handler resolves in the module by node name, function and path. The result has the SDK's
 * shape: workflow `{output, steps, stoppedEarly}`, parallel `{results, fulfilled, rejected}`,
 * stateGraph `{state, steps, iterations, terminatedBy}`.
 */
export function lowerSdk(ctx: LowerContext, step: IrStep, scope: Scope, v: string, sdk: IrSdkFlow): Frag {
  if (sdk.shape === 'stateGraph') return lowerSdkGraph(ctx, step, scope, v, sdk);
  const entry = ctx.stepNames.get(step)!;
  const prev = ctx.names.variable(`${v}_prev`);
  const steps = ctx.names.variable(`${v}_steps`);
  const input = ctx.names.variable(`${v}_in`);
  const ok = ctx.names.variable(`${v}_ok`);
  // States (and Choice rules) that go on to whatever comes next, linked once that is known.
  let pending: { holder: object; field: 'Next' | 'Default' }[] = [];
  const reach = (name: string) => {
    for (const p of pending) (p.holder as Record<string, unknown>)[p.field] = name;
    pending = [];
  };
  // A run's input is an object; the SDK's input is often text, which a run carries as {"input": …}
  // (as `run` does with text on standard input, and `.run(text)` does).
  const i = scope.inputVar;
  const start: AslState = {
    Type: 'Pass',
    Comment: ctx.comment(step, 'the first step gets the workflow input'),
    Assign: { [prev]: `{% $type(${i}) = "object" and $count($keys(${i})) = 1 and $exists(${i}.input) ? ${i}.input : ${i} %}`, [steps]: [] },
  };
  scope.states[entry] = start;
  pending.push({ holder: start, field: 'Next' });
  if (sdk.shape === 'parallel') {
    const group = sdkParallel(ctx, step, scope, sdk, entry, sdk.branches ?? [], `$${prev}`);
    reach(group.name);
    const exit: AslState = {
      Type: 'Pass',
      Comment: ctx.comment(step, 'each branch settled: fulfilled with its value or rejected with its error'),
      Assign: {
        [v]: `{% {"results": $${group.results}, "fulfilled": $count($${group.results}[status = "fulfilled"]), "rejected": $count($${group.results}[status = "rejected"])} %}`,
      },
    };
    const exitName = ctx.helper(step, 'results');
    scope.states[exitName] = exit;
    group.state.Next = exitName;
    return { entry, tails: [{ holder: exit, field: 'Next' }] };
  }
  for (const item of sdk.items ?? []) {
    if (item.kind === 'parallel') {
      const group = sdkParallel(ctx, step, scope, sdk, item.name, item.branches, `$${prev}`);
      reach(group.name);
      // Inside a workflow a group answers with its fulfilled outputs, one per line; none fails the run.
      const fulfilled = `$${group.results}[status = "fulfilled"]`;
      group.state.Assign = {
        ...(group.state.Assign as Record<string, unknown>),
        // Assign reads the variables as they were before the state: the group's results are $states.result here.
        [prev]: `{% $join($append([], $map($states.result[status = "fulfilled"], function($r) { $type($r.value) = "string" ? $r.value : $string($r.value) })), "\\n") %}`,
        [steps]: `{% $append($${steps}, [{"parallel": ${JSON.stringify(item.name)}, "results": $states.result}]) %}`,
      };
      const check = ctx.helper(step, `${item.name} any?`);
      const none = ctx.helper(step, `${item.name} all failed`);
      scope.states[none] = {
        Type: 'Fail',
        Comment: ctx.comment(step, `every branch of '${item.name}' failed`),
        Error: 'ParallelAllFailed',
        Cause: `every branch of the parallel group '${item.name}' failed`,
      };
      const rule: Record<string, unknown> = { Condition: `{% $count(${fulfilled}) = 0 %}`, Next: none };
      const choice: AslState = {
        Type: 'Choice',
        Comment: ctx.comment(step, `'${item.name}' fails the run only when no branch was fulfilled`),
        Choices: [rule],
      };
      scope.states[check] = choice;
      group.state.Next = check;
      pending.push({ holder: choice, field: 'Default' });
      continue;
    }
    const s = item.step;
    const agentName = ctx.names.state(s.name);
    ctx.stepStates.get(step)!.push(agentName);
    const agentRun = sdkAgent(ctx, step, scope, s, agentName, s.transform ? `$${input}` : `$${prev}`, (result) => ({
      [prev]: `{% ${result} %}`,
      [steps]: `{% $append($${steps}, [{"agent": ${JSON.stringify(s.name)}, "output": ${result}}]) %}`,
    }));
    let first = agentRun.entry;
    if (s.transform) {
      const t = ctx.helper(step, `${s.name} transform`);
      sdkFunctionTask(ctx, step, scope, sdk, t, s.name, 'transform', s.path, `{% $${prev} %}`, { [input]: `{% ${RESULT_VALUE} %}` }).Next =
        first;
      first = t;
    }
    if (s.when) {
      const w = ctx.helper(step, `${s.name} when?`);
      const run = ctx.helper(step, `${s.name} run?`);
      sdkFunctionTask(ctx, step, scope, sdk, w, s.name, 'when', s.path, `{% $${prev} %}`, { [ok]: `{% ${RESULT_VALUE} = true %}` }).Next =
        run;
      // A false `when` skips the step: the previous response is passed on.
      const skip: Record<string, unknown> = {
        Condition: `{% $not($${ok}) %}`,
        Assign: { [steps]: `{% $append($${steps}, [{"agent": ${JSON.stringify(s.name)}, "skipped": true}]) %}` },
      };
      scope.states[run] = {
        Type: 'Choice',
        Comment: ctx.comment(step, `'${s.name}' runs only when its when(prev) is true`),
        Choices: [skip],
        Default: first,
      };
      reach(w);
      pending.push({ holder: skip, field: 'Next' });
    } else {
      reach(first);
    }
    pending.push(agentRun.next);
  }
  const exitName = ctx.helper(step, 'result');
  const exit: AslState = {
    Type: 'Pass',
    Comment: ctx.comment(step, 'the last response is the output'),
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
function sdkParallel(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  sdk: IrSdkFlow,
  name: string,
  branches: readonly IrSdkStep[],
  groupInput: string,
): { name: string; state: AslState; results: string } {
  const stateName = name === ctx.stepNames.get(step) ? ctx.helper(step, 'parallel') : ctx.names.state(name);
  if (stateName !== ctx.stepNames.get(step)) ctx.stepStates.get(step)!.push(stateName);
  const results = ctx.names.variable(`${ctx.names.stepVariable(step.id)}_group`);
  const Branches = branches.map((b) => {
    const states: Record<string, AslState> = {};
    const branchScope: Scope = { ...scope, label: b.name, states, produced: [], failState: 'unused', top: false, env: scope.env.child() };
    const agentName = ctx.names.state(b.name);
    ctx.stepStates.get(step)!.push(agentName);
    const failed = ctx.helper(step, `${b.name} failed`);
    let value = b.input !== undefined ? b.input : `{% ${groupInput} %}`;
    let startAt = agentName;
    const branchValue = value;
    if (b.transform) {
      // A branch cannot set the workflow's variables: the transformed input is the next state's input.
      startAt = ctx.helper(step, `${b.name} transform`);
      const t = sdkFunctionTask(ctx, step, branchScope, sdk, startAt, b.name, 'transform', b.path, value, {});
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
      const decide = ctx.helper(step, `${b.name} when?`);
      const run = ctx.helper(step, `${b.name} run?`);
      const skipped = ctx.helper(step, `${b.name} skipped`);
      const w = sdkFunctionTask(ctx, step, branchScope, sdk, decide, b.name, 'when', b.path, branchValue, {});
      delete w.Assign;
      w.Output = `{% {"run": ${RESULT_VALUE} = true} %}`;
      w.Catch = [{ ErrorEquals: ['States.ALL'], Output: '{% $states.errorOutput %}', Next: failed }];
      w.Next = run;
      states[run] = {
        Type: 'Choice',
        Comment: ctx.comment(step, `'${b.name}' runs only when its when(input) is true`),
        Choices: [{ Condition: '{% $states.input.run %}', Next: startAt }],
        Default: skipped,
      };
      const passed =
        typeof branchValue === 'string' && branchValue.startsWith('{% ') ? branchValue.slice(3, -3) : JSON.stringify(branchValue);
      states[skipped] = {
        Type: 'Pass',
        Comment: ctx.comment(step, `'${b.name}' skipped: its input is its value`),
        Output: `{% {"status": "fulfilled", "agent": ${JSON.stringify(b.name)}, "value": ${passed}, "skipped": true} %}`,
        End: true,
      };
      startAt = decide;
    }
    const task = sdkAgentTask(ctx, step, branchScope, b, agentName, value, {});
    delete task.Assign;
    task.Output = `{% {"status": "fulfilled", "agent": ${JSON.stringify(b.name)}, "value": ${RESULT_VALUE}} %}`;
    task.End = true;
    task.Catch = [{ ErrorEquals: ['States.ALL'], Output: '{% $states.errorOutput %}', Next: failed }];
    states[failed] = {
      Type: 'Pass',
      Comment: ctx.comment(step, `'${b.name}' failed: the group goes on without it`),
      // A Lambda's Cause is its error as JSON ({errorType, errorMessage, trace}): the reason keeps the message.
      Output: `{% ( $c := $states.input.Cause; $m := $type($c) = "string" and $substring($c, 0, 13) = "{\\"errorType\\":" ? $eval($c).errorMessage : $c; {"status": "rejected", "agent": ${JSON.stringify(b.name)}, "reason": {"error": $states.input.Error, "cause": $exists($m) ? $m : $c}} ) %}`,
      End: true,
    };
    return { StartAt: startAt, States: states };
  });
  const state: AslState = {
    Type: 'Parallel',
    Comment: ctx.comment(step, `${branches.length} agents at once; a failing one does not stop the others`),
    Branches,
    Assign: { [results]: '{% $states.result %}' },
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
function sdkAgent(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  s: { name: string; agent: IrSdkAgent; retry?: IrRetry },
  stateName: string,
  input: string,
  assign: (result: string) => Record<string, unknown>,
  iterVars?: readonly string[],
): { entry: string; next: { holder: object; field: 'Next' } } {
  if (s.agent.tools.length === 0) {
    const task = sdkAgentTask(ctx, step, scope, s, stateName, `{% ${input} %}`, assign(RESULT_VALUE), iterVars);
    return { entry: stateName, next: { holder: task, field: 'Next' } };
  }
  const agentConfig = {
    ...(s.agent.model !== undefined ? { model: s.agent.model } : {}),
    ...(s.agent.instructions !== undefined ? { instructions: s.agent.instructions } : {}),
  };
  const sub: IrStep = {
    ...step,
    id: `${step.id}.${s.name}`,
    kind: 'agent',
    tools: [...s.agent.tools],
    retry: s.retry,
    config: { agent: s.agent.name, ...(Object.keys(agentConfig).length > 0 ? { agentConfig } : {}) },
    identity: stepIdentity('code_agent', { sdk: step.identity, node: s.name }, s.agent.tools),
    input: { kind: 'jsonata', jsonata: input, reads: [] },
  };
  ctx.stepNames.set(sub, stateName);
  ctx.stepStates.set(sub, [stateName]);
  // The loop's Fail states and its iteration (a graph's node run) belong to this scope.
  ctx.failState(scope);
  const loopScope: Scope = iterVars ? { ...scope, iterVars } : scope;
  const frag = ctx.lowerAgentLoop(sub, loopScope, ctx.names.variable(`${ctx.names.stepVariable(step.id)}_agent`));
  loopScope.failState ??= scope.failState;
  // Its init Pass (the loop's counters) is the entry: states before it are this lowering's own.
  const entry = frag.init ? frag.init.materialize() : frag.entry;
  ctx.stepStates.get(step)!.push(...ctx.stepStates.get(sub)!.filter((n) => n !== stateName));
  ctx.stepStates.delete(sub);
  ctx.stepNames.delete(sub);
  const done = frag.tails[0]!.holder as Record<string, unknown>;
  // The loop's last turn answers in `$<reply>.output`, which the done rule assigns to the step variable.
  const answer = String(Object.values(done.Assign as Record<string, string>)[0]).replace(/^\{% | %\}$/g, '');
  done.Assign = { ...(done.Assign as Record<string, unknown>), ...assign(answer) };
  return { entry, next: { holder: done, field: 'Next' } };
}

/** An agent of an SDK workflow: a model Task named after it, with its model, instructions, tools and retry. */
function sdkAgentTask(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  s: { name: string; agent: IrSdkAgent; retry?: IrRetry },
  stateName: string,
  value: unknown,
  assign: Record<string, unknown>,
  iterVars?: readonly string[],
): AslState {
  const sub: IrStep = {
    ...step,
    id: `${step.id}.${s.name}`,
    config: {},
    tools: [...s.agent.tools],
    retry: s.retry,
    identity: stepIdentity('code_agent', { sdk: step.identity, node: s.name }, s.agent.tools),
  };
  const agentConfig = {
    ...(s.agent.model !== undefined ? { model: s.agent.model } : {}),
    ...(s.agent.instructions !== undefined ? { instructions: s.agent.instructions } : {}),
  };
  const ref: IrAgentRef = {
    agent: s.agent.name,
    role: 'agent',
    identity: sub.identity,
    ...(Object.keys(agentConfig).length > 0 ? { agentConfig } : {}),
  };
  const task = ctx.agentTask(sub, scope, ref, stateName, value, assign, iterVars);
  // The state machine passes the answer on itself (joins, merges): it must come back inline.
  (task.Arguments as Record<string, unknown>).readByStateMachine = true;
  return task;
}

/** One of the user's functions, called by the function handler: `codeNode` names the node or step, `codeFn` which function. */
function sdkFunctionTask(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  sdk: IrSdkFlow,
  stateName: string,
  node: string,
  fn: string,
  path: readonly number[] | undefined,
  value: unknown,
  assign: Record<string, unknown>,
  iterVars?: readonly string[],
): AslState {
  const sub: IrStep = {
    ...step,
    id: `${step.id}.${node}`,
    tools: [],
    retry: undefined,
    identity: stepIdentity('code_fn', { sdk: step.identity, node, fn }, []),
  };
  const payload = ctx.payload(sub, scope, {
    kind: 'function',
    role: fn,
    identity: sub.identity,
    value,
    iterVars,
    config: {
      codeModule: sdk.module,
      codeExport: sdk.exportName,
      codeNode: node,
      codeFn: fn,
      ...(path !== undefined ? { codePath: [...path] } : {}),
    },
  });
  payload.readByStateMachine = true;
  const task = ctx.taskState(sub, scope, 'function', payload, assign, `${fn} of '${node}' (runs in the function handler)`);
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
function lowerSdkGraph(ctx: LowerContext, step: IrStep, scope: Scope, v: string, sdk: IrSdkFlow): Frag {
  const entry = ctx.stepNames.get(step)!;
  const state = ctx.names.variable(`${v}_state`);
  const steps = ctx.names.variable(`${v}_steps`);
  const iters = ctx.names.variable(`${v}_iterations`);
  const hold = ctx.names.variable(`${v}_hold`);
  const max = sdk.maxIterations ?? 25;
  const iterVars = [...scope.iterVars, iters];
  const nodes = sdk.nodes ?? [];
  const exits: AslState[] = [];
  const exitFor = new Map<string, string>();
  const exit = (by: 'end' | 'maxIterations' | 'noEdge') => {
    let name = exitFor.get(by);
    if (name === undefined) {
      name = ctx.helper(step, by === 'end' ? 'END' : by === 'maxIterations' ? 'max iterations' : 'no edge');
      const pass: AslState = {
        Type: 'Pass',
        Comment: ctx.comment(step, `the graph stops: ${by}`),
        Assign: { [v]: `{% {"state": $${state}, "steps": $${steps}, "iterations": $${iters}, "terminatedBy": ${JSON.stringify(by)}} %}` },
      };
      scope.states[name] = pass;
      exits.push(pass);
      exitFor.set(by, name);
    }
    return name;
  };
  // Each node is entered through a Choice that stops the graph once it has run its bound.
  const gate = new Map(nodes.map((n) => [n.name, ctx.helper(step, `${n.name}?`)]));
  const merge = (partial: string) => ({
    [state]: `{% $merge([$${state}, $type(${partial}) = "object" ? ${partial} : {}]) %}`,
    [steps]: `{% $append($${steps}, [{"node": NODE, "update": ${partial}}]) %}`,
    [iters]: `{% $${iters} + 1 %}`,
  });
  for (const n of nodes) {
    const name = ctx.names.state(n.name);
    ctx.stepStates.get(step)!.push(name);
    const assign = (partial: string) =>
      Object.fromEntries(Object.entries(merge(partial)).map(([k, x]) => [k, x.replace('NODE', JSON.stringify(n.name))]));
    let first = name;
    let last: AslState;
    if (n.agent) {
      const input = ctx.helper(step, `${n.name} input`);
      const mergeName = ctx.helper(step, `${n.name} merge`);
      const agentRun = sdkAgent(
        ctx,
        step,
        scope,
        { name: n.name, agent: n.agent },
        name,
        `$${hold}`,
        (result) => ({ [hold]: `{% ${result} %}` }),
        iterVars,
      );
      (agentRun.next.holder as Record<string, unknown>)[agentRun.next.field] = mergeName;
      sdkFunctionTask(
        ctx,
        step,
        scope,
        sdk,
        input,
        n.name,
        'input',
        undefined,
        `{% $${state} %}`,
        { [hold]: `{% ${RESULT_VALUE} %}` },
        iterVars,
      ).Next = agentRun.entry;
      last = sdkFunctionTask(
        ctx,
        step,
        scope,
        sdk,
        mergeName,
        n.name,
        'merge',
        undefined,
        `{% {"state": $${state}, "output": $${hold}} %}`,
        assign(RESULT_VALUE),
        iterVars,
      );
      first = input;
    } else {
      last = sdkFunctionTask(ctx, step, scope, sdk, name, n.name, 'node', undefined, `{% $${state} %}`, assign(RESULT_VALUE), iterVars);
    }
    scope.states[gate.get(n.name)!] = {
      Type: 'Choice',
      Comment: ctx.comment(step, `'${n.name}' runs unless the graph has run ${max} nodes`),
      Choices: [{ Condition: `{% $${iters} >= ${max} %}`, Next: exit('maxIterations') }],
      Default: first,
    };
    const next = n.next;
    if (next === undefined) last.Next = exit('noEdge');
    else if ('to' in next) last.Next = next.to === '__end__' ? exit('end') : gate.get(next.to)!;
    else {
      const route = ctx.helper(step, `${n.name} route`);
      const pick = ctx.helper(step, `${n.name} next`);
      last.Next = route;
      sdkFunctionTask(
        ctx,
        step,
        scope,
        sdk,
        route,
        n.name,
        'route',
        undefined,
        `{% $${state} %}`,
        { [hold]: `{% ${RESULT_VALUE} %}` },
        iterVars,
      ).Next = pick;
      const unknown = ctx.helper(step, `${n.name} unknown node`);
      scope.states[unknown] = {
        Type: 'Fail',
        Comment: ctx.comment(step, `the router after '${n.name}' named no node`),
        Error: 'UnknownNode',
        Cause: `the router after node '${n.name}' returned a name that is no node of the graph`,
      };
      scope.states[pick] = {
        Type: 'Choice',
        Comment: ctx.comment(step, `the router after '${n.name}' names the next node`),
        Choices: [
          { Condition: `{% $${hold} = "__end__" %}`, Next: exit('end') },
          ...nodes.map((m) => ({ Condition: `{% $${hold} = ${JSON.stringify(m.name)} %}`, Next: gate.get(m.name)! })),
        ],
        Default: unknown,
      };
    }
  }
  scope.states[entry] = {
    Type: 'Pass',
    Comment: ctx.comment(step, 'the state starts as the input'),
    Assign: { [state]: `{% $type(${scope.inputVar}) = "object" ? ${scope.inputVar} : {} %}`, [steps]: [], [iters]: 0, [hold]: null },
    Next: gate.get(sdk.start ?? nodes[0]!.name)!,
  };
  return { entry, tails: exits.map((holder) => ({ holder, field: 'Next' as const })) };
}
