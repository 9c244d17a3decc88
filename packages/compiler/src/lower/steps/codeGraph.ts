// A Kortyx workflow written in code (defineWorkflow): one function Task per node, routed by Choices.
import type { IrCodeChild, IrStep } from '../../ir/Ir.js';
import { stepIdentity } from '../../ir/stepIdentity.js';
import { RESULT_VALUE, type AslState, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

/**
 * A JSONata `$deepMerge(l, r)`: r over l, objects merged key by key, anything else in r (arrays
 * included) replacing what l holds (Kortyx's deepMergeWithArrayOverwrite).
 */
const DEEP_MERGE =
  '$deepMerge := function($l, $r) { $type($l) = "object" and $type($r) = "object" ? $merge($append([$l], $each($r, function($v, $k) { {$k: $deepMerge($lookup($l, $k), $v)} }))) : $r }';
import { renderRetry } from '../renderRetry.js';

/**
 * A workflow written in code: one function Task per node (named after it), each followed by a
 * Choice over the edges leaving it. The run state is a variable: a node gets it as its input and
 * its returned `data` is merged in. An edge's `when` matches the returned `condition` first (all
 * those rules come first), then `intent`; an edge without `when` is the Choice's Default. Cycles
 * are bounded by a node-run counter (MaxIterationsExceeded past the bound).
 *
 * Hand-offs (Kortyx's `transitionTo`): a node's returned `transitionTo` is kept as the pending
 * hand-off (the last one returned wins) with the node's `data` as its payload, and the workflow runs
 * on to its end, as Kortyx's orchestrator lets the graph finish before it starts the next workflow.
 * At the end a Choice starts the named workflow as a nested execution (startExecution.sync:2) with
 * the run state and the payload merged over it, and that workflow's output is the run's result.
 * The function handler has refused a target that is none of `handoffs` (HandoffTargetUnknown).
 */
export function lowerCodeGraph(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const g = step.composite?.graph;
  if (!g) ctx.fail('invalid_document', `code workflow '${step.id}' has no graph`, step);
  const state = ctx.names.variable(`${v}_state`);
  const last = ctx.names.variable(`${v}_last`);
  const runs = ctx.names.variable(`${v}_runs`);
  const taskName = new Map<string, string>();
  // Where an edge into a node goes: the node's Task, or for a useWorkflow node its input check.
  const entryName = new Map<string, string>();
  // Node states carry the node's own name: that is what the console's execution view shows.
  for (const n of g.nodes) {
    const name = ctx.names.state(n.name);
    ctx.stepStates.get(step)!.push(name);
    taskName.set(n.name, name);
    entryName.set(n.name, n.child ? ctx.helper(step, `${n.name} input`) : name);
  }
  const exitName = ctx.helper(step, 'end');
  const exit: AslState = { Type: 'Pass', Comment: ctx.comment(step, 'the run state is the result'), Assign: { [v]: `{% $${state} %}` } };
  scope.states[exitName] = exit;
  const handoffs = g.handoffs ?? [];
  const handoff = handoffs.length > 0 ? ctx.names.variable(`${v}_handoff`) : undefined;
  // Where the graph ends: the hand-off check when a node may hand the run over, else the result.
  const endName = handoff !== undefined ? lowerHandoffs(ctx, step, scope, handoffs, state, handoff, exitName) : exitName;
  const tooMany = ctx.helper(step, 'too many iterations');
  scope.states[tooMany] = {
    Type: 'Fail',
    Comment: ctx.comment(step, `more than ${g.maxIterations} node runs`),
    Error: 'MaxIterationsExceeded',
    Cause: `workflow '${step.id}' ran more than ${g.maxIterations} nodes: a cycle in its edges did not end`,
  };
  const target = (to: string) =>
    to === '__end__' ? endName : (entryName.get(to) ?? ctx.fail('invalid_workflow', `edge to unknown node '${to}'`, step));
  const merged = {
    // Kortyx deep-merges a node's data into the run state (nested objects merge, anything else,
    // arrays included, replaces what was there).
    [state]: `{% ( ${DEEP_MERGE}; $type($states.result.output.data) = "object" ? $deepMerge($${state}, $states.result.output.data) : $${state} ) %}`,
    [last]: `{% ${RESULT_VALUE} %}`,
    [runs]: `{% $${runs} + 1 %}`,
    // The last transitionTo a node returned, with its data (Kortyx's transition payload).
    ...(handoff !== undefined
      ? {
          [handoff]: `{% $type($states.result.output) = "object" and $type($states.result.output.transitionTo) = "string" and $states.result.output.transitionTo != "" ? {"to": $states.result.output.transitionTo, "payload": $type($states.result.output.data) = "object" ? $states.result.output.data : {}} : $${handoff} %}`,
        }
      : {}),
  };
  for (const n of g.nodes) {
    const node: IrStep = {
      ...step,
      id: `${step.id}.${n.name}`,
      retry: n.retry,
      identity: stepIdentity('code_node', { graph: step.identity, node: n.name }, []),
    };
    const config = {
      codeModule: g.module,
      codeExport: g.exportName,
      codeNode: n.name,
      ...(n.params !== undefined ? { params: n.params } : {}),
      // The ids a returned transitionTo may name: the handler refuses any other, naming the node.
      ...(handoffs.length > 0 ? { codeHandoffs: handoffs.map((h) => h.id) } : {}),
    };
    // Routing follows the state that ends the node: its Task, or a child's output check.
    let name = taskName.get(n.name)!;
    if (n.child) {
      name = lowerChildNode(ctx, step, scope, node, n.name, n.child, config, state, taskName.get(n.name)!, entryName.get(n.name)!, merged);
    } else {
      const payload = ctx.payload(node, scope, { kind: 'function', identity: node.identity, value: `{% $${state} %}`, config });
      scope.states[name] = ctx.taskState(node, scope, 'function', payload, merged, `node '${n.name}' (runs in the function handler)`);
    }
    const task = scope.states[name]!;
    const out = g.edges.filter((e) => e.from === n.name);
    const routed = out.filter((e) => e.when !== undefined);
    const plain = out.find((e) => e.when === undefined);
    if (routed.length === 0) {
      const next = plain ? target(plain.to) : endName;
      task.Next = next === endName ? next : boundedNext(ctx, step, scope, n.name, runs, g.maxIterations, tooMany, next);
      continue;
    }
    const route = ctx.helper(step, `${n.name} next?`);
    task.Next = route;
    // Kortyx routes on the condition when the node returned one, and on the intent only when it did
    // not: a condition that no edge names ends the workflow, whatever the intent.
    const rule = (field: string) => (e: { when?: string; to: string }) => ({
      Condition:
        field === 'intent'
          ? `{% $type($${last}) = "object" and $not($type($${last}.condition) = "string") and $${last}.intent = ${JSON.stringify(e.when)} %}`
          : `{% $type($${last}) = "object" and $${last}.${field} = ${JSON.stringify(e.when)} %}`,
      Next: target(e.to),
    });
    scope.states[route] = {
      Type: 'Choice',
      Comment: ctx.comment(step, `after '${n.name}': its condition, then its intent, picks the edge`),
      Choices: [
        { Condition: `{% $${runs} >= ${g.maxIterations} %}`, Next: tooMany },
        ...routed.map(rule('condition')),
        ...routed.map(rule('intent')),
      ],
      Default: plain ? target(plain.to) : endName,
    };
  }
  const first = entryName.get(g.start) ?? ctx.fail('invalid_workflow', `the workflow starts at unknown node '${g.start}'`, step);
  // Its own Pass rather than an init folded into whatever leads here: the state starts as the
  // input variable, which a state assigning `input` itself could not read yet.
  const entry = ctx.stepNames.get(step)!;
  scope.states[entry] = {
    Type: 'Pass',
    Comment: ctx.comment(step, 'the run state starts as the input'),
    Assign: { [state]: `{% ${scope.inputVar} %}`, [last]: null, [runs]: 0, ...(handoff !== undefined ? { [handoff]: null } : {}) },
    Next: first,
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
function lowerChildNode(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  node: IrStep,
  nodeName: string,
  child: IrCodeChild,
  config: Record<string, unknown>,
  state: string,
  startName: string,
  inputName: string,
  merged: Record<string, unknown>,
): string {
  const childIn = ctx.names.variable(`${state}_child_in`);
  const childName = ctx.names.variable(`${state}_child_name`);
  const childOut = ctx.names.variable(`${state}_child_out`);
  const checkIn = ctx.taskState(
    { ...node, retry: undefined, identity: stepIdentity('code_child_input', { node: node.identity }, []) },
    scope,
    'function',
    ctx.payload(node, scope, {
      kind: 'function',
      identity: stepIdentity('code_child_input', { node: node.identity }, []),
      value: `{% $${state} %}`,
      config: { ...config, codeFn: 'childInput', codeChild: child.id },
    }),
    { [childIn]: `{% ${RESULT_VALUE}.input %}`, [childName]: `{% ${RESULT_VALUE}.name %}` },
    `node '${nodeName}': the input of workflow '${child.id}', checked against its inputSchema, and the name of its execution (function handler)`,
  );
  checkIn.Next = startName;
  scope.states[inputName] = checkIn;
  const start: AslState = {
    Type: 'Task',
    Comment: ctx.comment(node, `node '${nodeName}': runs workflow '${child.id}' as a nested execution and waits for its output`),
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
  const earlierName = ctx.helper(step, `${nodeName} earlier`);
  start.Catch = [
    { ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException'], Next: earlierName },
    { ErrorEquals: ['States.ALL'], Output: `{% [${JSON.stringify(node.id)}, $states.errorOutput] %}`, Next: ctx.failState(scope) },
  ];
  scope.states[startName] = start;
  const outputName = ctx.helper(step, `${nodeName} output`);
  const childReused = ctx.names.variable(`${state}_child_reused`);
  const earlierIdentity = stepIdentity('code_child_earlier', { node: node.identity }, []);
  const earlier = ctx.taskState(
    { ...node, retry: undefined, identity: earlierIdentity },
    scope,
    'function',
    ctx.payload(node, scope, {
      kind: 'function',
      identity: earlierIdentity,
      config: { ...config, codeFn: 'childEarlier', codeChild: child.id },
      value: `{% {"executionArn": $substringBefore($states.context.StateMachine.Id, ":stateMachine:") & ":execution:" & ${JSON.stringify(child.name)} & ":" & $${childName}} %}`,
    }),
    {
      [childOut]: `{% ${RESULT_VALUE}.output %}`,
      [childName]: `{% ${RESULT_VALUE}.name %}`,
      [childReused]: `{% ${RESULT_VALUE}.reused %}`,
    },
    `node '${nodeName}': an execution of '${child.id}' under this name exists already (a retried run): its output, or the name to start under`,
  );
  const earlierDone = ctx.helper(step, `${nodeName} earlier done?`);
  earlier.Next = earlierDone;
  scope.states[earlierName] = earlier;
  scope.states[earlierDone] = {
    Type: 'Choice',
    Comment: ctx.comment(
      node,
      `node '${nodeName}': the earlier child succeeded (its output is reused), or it is started under the next name`,
    ),
    Choices: [{ Condition: `{% $${childReused} %}`, Next: outputName }],
    Default: startName,
  };
  const checkOut = ctx.taskState(
    { ...node, retry: undefined, identity: stepIdentity('code_child_output', { node: node.identity }, []) },
    scope,
    'function',
    ctx.payload(node, scope, {
      kind: 'function',
      identity: stepIdentity('code_child_output', { node: node.identity }, []),
      value: `{% $${childOut} %}`,
      config: { ...config, codeFn: 'childOutput', codeChild: child.id },
    }),
    merged,
    `node '${nodeName}': the output of workflow '${child.id}', checked against its outputSchema (function handler)`,
  );
  start.Next = outputName;
  scope.states[outputName] = checkOut;
  return outputName;
}

/**
 * The end of a graph whose nodes may hand the run over: `hand off?` (Choice) on the pending
 * hand-off's workflow id, to one `hand off to <id>` Task per workflow, which starts it as a nested
 * execution (startExecution.sync:2) with the run state and the payload merged over it (Kortyx
 * merges the transition payload over the run's data) and makes its output the run state; with none
 * pending, the run state is the result. Returns the Choice's name.
 */
function lowerHandoffs(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  handoffs: readonly IrCodeChild[],
  state: string,
  handoff: string,
  exitName: string,
): string {
  const choiceName = ctx.helper(step, 'hand off?');
  const choices: { Condition: string; Next: string }[] = [];
  for (const h of handoffs) {
    const name = ctx.helper(step, `hand off to ${h.id}`);
    scope.states[name] = {
      Type: 'Task',
      Comment: ctx.comment(
        step,
        `a node handed the run over to workflow '${h.id}' (transitionTo): it runs as a nested execution, and its output is the result`,
      ),
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Arguments: {
        // Deployed beside this workflow, in its account and region, under its workflow name.
        StateMachineArn: `{% $substringBefore($states.context.StateMachine.Id, ":stateMachine:") & ":stateMachine:" & ${JSON.stringify(h.name)} %}`,
        Input: `{% $merge([$${state}, $${handoff}.payload]) %}`,
      },
      Assign: { [state]: '{% $states.result.Output %}' },
      Catch: [
        {
          ErrorEquals: ['States.ALL'],
          Output: `{% [${JSON.stringify(`${step.id}.${h.id}`)}, $states.errorOutput] %}`,
          Next: ctx.failState(scope),
        },
      ],
      Next: exitName,
    };
    choices.push({ Condition: `{% $type($${handoff}) = "object" and $${handoff}.to = ${JSON.stringify(h.id)} %}`, Next: name });
  }
  scope.states[choiceName] = {
    Type: 'Choice',
    Comment: ctx.comment(step, 'a node handed the run over to another workflow (transitionTo), or the run state is the result'),
    Choices: choices,
    Default: exitName,
  };
  return choiceName;
}

/** A fixed edge inside a possibly cyclic graph: a Choice that stops the run past the bound. */
function boundedNext(
  ctx: LowerContext,
  step: IrStep,
  scope: Scope,
  from: string,
  runs: string,
  max: number,
  tooMany: string,
  next: string,
): string {
  const name = ctx.helper(step, `${from} next?`);
  scope.states[name] = {
    Type: 'Choice',
    Comment: ctx.comment(step, `after '${from}'`),
    Choices: [{ Condition: `{% $${runs} >= ${max} %}`, Next: tooMany }],
    Default: next,
  };
  return name;
}
