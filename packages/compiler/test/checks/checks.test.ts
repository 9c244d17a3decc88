// The checks on their own, as every front-end and the lowering call them: each returns (or, for the
// quotas, throws) its finding with its class, message and fix; the callers' tests cover the locations.
import { isStepforgeError } from '@stepforge/contract';
import { describe, expect, it } from 'vitest';
import { agenticNonModel } from '../../src/checks/agenticNonModel.js';
import { callCycle, chainCycle, dependencyCycle, readsItself, stepCycle } from '../../src/checks/cycle.js';
import { checkDefinitionSize, MAX_DEFINITION_BYTES } from '../../src/checks/quotas/definitionSize.js';
import { checkExpress, expressBlocker } from '../../src/checks/quotas/express.js';
import { historyLimit, MAX_HISTORY_EVENTS } from '../../src/checks/quotas/historyLimit.js';
import { payloadBudget } from '../../src/checks/quotas/payloadBudget.js';
import {
  duplicateStateName,
  MAX_STATE_NAME,
  nonAsciiStateName,
  reservedStateName,
  stateNameTooLong,
} from '../../src/checks/quotas/stateName.js';
import { tierLimits, unknownTier } from '../../src/checks/tierLimit.js';
import { unboundedCycles, type LoopingTask } from '../../src/checks/unboundedCycle.js';
import { danglingGoto, unknownDeclaration, unknownHandle, unknownReference, withSuggestion } from '../../src/checks/unknownReference.js';
import type { IrDocument, IrStep } from '../../src/ir/Ir.js';
import { DEFAULT_TIERS } from '../../src/tiers/Tier.js';

/** The error `run` throws (failing the test when it throws none, or something else). */
function thrown(run: () => unknown): { code: string; message: string; hint?: string; location?: unknown; details?: unknown } {
  try {
    run();
  } catch (e) {
    if (isStepforgeError(e)) return e;
    throw e;
  }
  throw new Error('expected a StepforgeError');
}

describe('checks/unknownReference', () => {
  it('finds a name undeclared in a record, a map, a set or a list, with the closest declared one', () => {
    expect(unknownReference('writer', { writer: 1 })).toBeUndefined();
    expect(unknownReference('writr', { writer: 1 })).toEqual({ name: 'writr', suggestion: 'writer' });
    expect(unknownReference('writr', new Map([['writer', 1]]))).toEqual({ name: 'writr', suggestion: 'writer' });
    expect(unknownReference('writr', new Set(['writer']))).toEqual({ name: 'writr', suggestion: 'writer' });
    expect(unknownReference('zzz', ['writer'])).toEqual({ name: 'zzz' });
    // A record's inherited keys are not declarations.
    expect(unknownReference('toString', {})).toEqual({ name: 'toString' });
  });

  it("words each format's finding: a chain handle, a DSL declaration, a Contenox goto", () => {
    expect(unknownHandle(withSuggestion('draf', ['draft', 'plan']))).toEqual({
      code: 'unknown_handle',
      message: "unknown task handle 'draf'; did you mean 'draft'?",
      details: { handle: 'draf', suggestion: 'draft' },
    });
    expect(unknownHandle(withSuggestion('zzz', ['draft'])).message).toBe("unknown task handle 'zzz'; define it under tasks:");
    expect(unknownDeclaration('MCP server', { name: 'gh', suggestion: 'github' })).toEqual({
      code: 'unknown_mcp_server',
      message: "unknown MCP server 'gh'",
      hint: "did you mean 'github'?",
    });
    expect(unknownDeclaration('agent', { name: 'x' })).toEqual({
      code: 'unknown_agent',
      message: "unknown agent 'x'",
      hint: 'declare it under agents:',
    });
    expect(danglingGoto('plan', { name: 'revew', suggestion: 'review' }, ['plan', 'review'])).toEqual({
      code: 'dangling_goto',
      message: "task 'plan' goes to 'revew', which is no task of this chain (did you mean 'review'?)",
      hint: 'name one of: plan, review, or "end"',
      details: { goto: 'revew' },
    });
  });
});

describe('checks/cycle', () => {
  const names = ['a', 'b', 'c'];
  it('reports a cycle in the chain notation, the edge that closed it last', () => {
    const cycle = dependencyCycle(
      3,
      [
        [1, 2],
        [2, 1],
        [0, 1],
      ],
      (i) => names[i]!,
    )!;
    expect(cycle).toEqual({ nodes: [1, 2, 1], names: ['b', 'c', 'b'] });
    expect(chainCycle(cycle)).toEqual({ code: 'cycle', message: 'cycle: b > c > b', details: { path: ['b', 'c', 'b'] } });
    expect(chainCycle(dependencyCycle(3, [[2, 2]], (i) => names[i]!)!).message).toBe("cycle: 'c' depends on itself (c > c)");
    expect(
      dependencyCycle(
        3,
        [
          [0, 1],
          [1, 2],
        ],
        (i) => names[i]!,
      ),
    ).toBeUndefined();
  });

  it('reports a DSL cycle from its earliest step, and a step reading itself or its enclosing loop', () => {
    const cycle = dependencyCycle(
      3,
      [
        [2, 1],
        [1, 2],
      ],
      (i) => names[i]!,
      true,
    )!;
    expect(stepCycle(cycle)).toEqual({
      code: 'cycle',
      message: 'dependency cycle: b → c → b',
      details: { path: ['b', 'c', 'b'] },
      hint: 'dependencies come from after: and from every steps.<name> reference',
    });
    expect(readsItself('a', 'a')).toEqual({ code: 'cycle', message: "step 'a' depends on itself", details: { path: ['a', 'a', 'a'] } });
    expect(readsItself('loop', 'inner').message).toBe("step 'inner' inside 'loop' reads 'loop', which finishes only after its body");
  });

  it('finds workflows that start one another, each visited once', () => {
    interface Wf {
      id: string;
      children: Wf[];
    }
    const a: Wf = { id: 'a', children: [] };
    const c: Wf = { id: 'c', children: [] };
    const b: Wf = { id: 'b', children: [c, a] };
    c.children.push(c);
    const children = (w: Wf) => w.children;
    expect(callCycle(b, 'a', (w) => w.id, children, ['a'])).toEqual(['a', 'b', 'a']);
    expect(callCycle(c, 'a', (w) => w.id, children, ['a'])).toBeUndefined();
  });
});

describe('checks/agenticNonModel', () => {
  it('refuses tools on a known non-model kind only', () => {
    expect(agenticNonModel('fetch', 'tool', ['web-search'])).toEqual({
      code: 'agentic_non_model',
      message: "'fetch' is a tool step; only model steps can be granted tools (@web-search)",
      details: { handle: 'fetch', kind: 'tool', tools: ['web-search'] },
    });
    expect(agenticNonModel('plan', 'model', ['web-search'])).toBeUndefined();
    expect(agenticNonModel('fetch', 'tool', [])).toBeUndefined();
    // A misspelt kind is the task check's to report.
    expect(agenticNonModel('fetch', 'tol', ['web-search'])).toBeUndefined();
  });
});

describe('checks/tierLimit', () => {
  const tier = DEFAULT_TIERS.standard!;
  const field = (handle: string, f: string) => `tasks.${handle}.${f}`;
  it('needs an agentic step when every kind is known, and narrows budgets', () => {
    const steps = [{ handle: 'plan', start: 0, kind: 'model', tools: [], task: { kind: 'model' } }];
    expect(tierLimits(tier, steps, true, field).findings).toEqual([
      {
        finding: {
          code: 'tier_limit',
          message: "the standard tier needs at least 1 model step(s) granted a tool, found 0; grant one with '@', e.g. 'plan@web-search'",
        },
        at: { expression: 0, length: 1 },
      },
    ]);
    expect(tierLimits(tier, steps, false, field).findings).toEqual([]);
    const narrowed = tierLimits(
      tier,
      [{ handle: 'plan', start: 0, kind: 'model', tools: ['web-search'], task: { kind: 'model', max_turns: 4 } }],
      true,
      field,
    );
    expect(narrowed.findings).toEqual([]);
    expect([...narrowed.budgets]).toEqual([['plan', { maxTurns: 4, maxToolCalls: tier.maxToolCalls }]]);
  });

  it('refuses too many agentic steps and a budget wider than the tier, at the field as written', () => {
    const steps = Array.from({ length: tier.maxAgenticSteps + 1 }, (_, i) => ({
      handle: `s${i}`,
      start: i * 4,
      kind: 'model',
      tools: ['t'],
      task: { kind: 'model', max_tool_calls: i === 0 ? 99 : undefined },
    }));
    const { findings } = tierLimits(tier, steps, true, (h, f) => `tasks.${h}.params.${f}`);
    expect(findings).toEqual([
      {
        finding: {
          code: 'tier_limit',
          message: `the standard tier allows at most 8 model steps granted tools, found 9 ('s8' is number 9)`,
        },
        at: { expression: 32, length: 2 },
      },
      {
        finding: {
          code: 'tier_limit',
          message:
            "tasks.s0.params.max_tool_calls: 99 exceeds the standard tier's budget of 20 tool calls per agentic step (it may narrow the budget, never widen it)",
        },
        at: { handle: 's0', field: 'max_tool_calls' },
      },
    ]);
    expect(unknownTier('standrd', DEFAULT_TIERS)).toEqual({
      code: 'tier_limit',
      message: 'unknown tier "standrd"; did you mean \'standard\'? (known tiers: standard)',
    });
    expect(unknownTier(3, DEFAULT_TIERS).message).toBe('unknown tier 3 (known tiers: standard)');
  });
});

describe('checks/unboundedCycle', () => {
  const at = (line: number) => ({ line, column: 1 });
  const task = (id: string, index: number, branches: LoopingTask['branches']): LoopingTask => ({
    id,
    index,
    location: at(index + 1),
    branches,
  });
  it('refuses a loop that nothing ends, and accepts one an edge counter leaves first', () => {
    const loop = [task('ask', 0, [{ operator: 'default', goto: 1 }]), task('check', 1, [{ operator: 'default', goto: 0 }])];
    expect(unboundedCycles(loop)).toEqual([
      {
        finding: {
          code: 'unbounded_cycle',
          message: "tasks 'ask' → 'check' form a cycle that nothing bounds",
          details: { cycle: ['ask', 'check'] },
          hint: 'add a first branch {"operator": "edge_traversed_at_least", "edge": "ask->check", "when": "5", "goto": "end"} to one of them (before any default): a run\'s history is capped at 25,000 events',
        },
        location: at(1),
      },
    ]);
    const bounded = [
      loop[0]!,
      task('check', 1, [
        { operator: 'edge_traversed_at_least', goto: 'end', edge: [0, 1] },
        { operator: 'default', goto: 0 },
      ]),
    ];
    expect(unboundedCycles(bounded)).toEqual([]);
    // After a default the counter is never reached.
    const late = [
      loop[0]!,
      task('check', 1, [
        { operator: 'default', goto: 0 },
        { operator: 'edge_traversed_at_least', goto: 'end', edge: [0, 1] },
      ]),
    ];
    expect(unboundedCycles(late).map((f) => f.finding.code)).toEqual(['unbounded_cycle']);
  });
});

describe('checks/quotas', () => {
  const location = { file: 'w.yaml', line: 3, column: 5 };
  const step = (over: Partial<IrStep>): IrStep => ({
    id: 'plan',
    kind: 'model',
    identity: 'x',
    config: {},
    tools: [],
    secrets: [],
    location,
    ...over,
  });
  const doc = (steps: IrStep[]): IrDocument => ({
    name: 'w',
    format: 'dsl',
    file: 'w.yaml',
    source: 'a\nb\nc\n',
    workflow: { steps, edges: [] },
  });

  it('names the state-name rules', () => {
    expect(nonAsciiStateName('plan')).toBeUndefined();
    expect(nonAsciiStateName('plän')).toEqual({
      code: 'state_name',
      message: "step 'plän' has a name with non-ASCII characters; Step Functions state names must be ASCII",
      hint: 'rename the step using ASCII letters, digits, spaces, "-" or "_"',
    });
    expect(stateNameTooLong('a', 'x'.repeat(MAX_STATE_NAME))).toBeUndefined();
    expect(stateNameTooLong('a', 'x'.repeat(MAX_STATE_NAME + 1))?.message).toBe(
      "step 'a' gives a state name of 81 characters; Step Functions allows at most 80",
    );
    expect(duplicateStateName('b', 'loop/b')).toEqual({
      code: 'state_name',
      message: "step 'b' gives the state name 'loop/b' twice; state names must be unique in a state machine",
      hint: 'give nested steps distinct names',
    });
    expect(reservedStateName('Start')).toEqual({ code: 'state_name', message: "a step is named 'Start'" });
  });

  it('counts worst-case history events, refusing a Standard run over the quota at the step adding most', () => {
    const big = doc([step({ tools: ['t'], budget: { maxTurns: 3000, maxToolCalls: 0 } }), step({ id: 'small', location: undefined })]);
    const error = thrown(() => historyLimit(big, () => 1, false));
    expect(error.code).toBe('history_limit');
    expect(error.message).toMatch(
      new RegExp(
        `^a run can write up to \\d+ history events in the worst case; Standard workflows allow ${MAX_HISTORY_EVENTS} \\(step 'plan' alone: \\d+\\)$`,
      ),
    );
    expect(error.location).toEqual(location);
    expect(error.details).toEqual({ step: 'plan' });
    expect(historyLimit(big, () => 1, true)).toBeGreaterThan(MAX_HISTORY_EVENTS);
    // More attempts per task, more events.
    const small = doc([step({})]);
    expect(historyLimit(small, () => 3, false)).toBe(historyLimit(small, () => 1, false) + 2 * 3);
  });

  it('refuses a definition over the size quota at the file start, and Express for a task-token wait', () => {
    expect(() => checkDefinitionSize(doc([]), MAX_DEFINITION_BYTES)).not.toThrow();
    const size = thrown(() => checkDefinitionSize(doc([]), MAX_DEFINITION_BYTES + 1));
    expect([size.code, size.message, size.location]).toEqual([
      'definition_too_large',
      `the compiled definition is ${MAX_DEFINITION_BYTES + 1} bytes; Step Functions accepts at most ${MAX_DEFINITION_BYTES}`,
      { file: 'w.yaml', line: 1, column: 1 },
    ]);
    const asl = { States: { a: { Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken' } } };
    expect(expressBlocker({ States: { a: { Resource: 'arn:aws:states:::lambda:invoke' } } })).toBeUndefined();
    const express = thrown(() => checkExpress('w', asl));
    expect([express.code, express.message]).toEqual([
      'express_unsupported',
      `workflow 'w' cannot run as an Express workflow: ${expressBlocker(asl)}`,
    ]);
  });

  it('budgets payloads with the larger cap for outputs read inline, and names the step over the quota', () => {
    const reader = step({ id: 'judge', kind: 'pure', input: { text: '', reads: ['plan'] } as never });
    const plan = step({});
    const inline = payloadBudget(doc([plan, reader]), (s) => s.id === 'plan');
    const byRef = payloadBudget(doc([plan, reader]), () => false);
    expect(inline.step).toBe('judge');
    expect(inline.bytes).toBeGreaterThan(byRef.bytes);
    const fan = step({
      id: 'fan',
      kind: 'parallel_analyzer',
      composite: { analysts: Array.from({ length: 40 }, (_, i) => ({ agent: 'a', role: `r${i}` })) } as never,
    });
    const error = thrown(() => payloadBudget(doc([fan]), () => false));
    expect([error.code, error.hint, error.details]).toEqual([
      'payload_budget',
      'read fewer step outputs in this step, or split it',
      { step: 'fan' },
    ]);
    expect(error.message).toMatch(/^step 'fan' may carry up to \d+ KiB through one state; Step Functions allows 256 KiB$/);
  });
});
