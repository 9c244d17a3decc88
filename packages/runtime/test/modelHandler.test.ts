import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runtimeConfigFromEnv } from '../src/config/RuntimeConfig.js';
import { createModelHandler } from '../src/handlers/model.js';
import { LocalProvider } from '../src/providers/LocalProvider.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { envelope } from './envelope.js';
import { makeRuntime, startDynalite, type DynamoEndpoint } from './emulators.js';

let ddb: DynamoEndpoint;
let rt: Runtime;
let scripted: Runtime;
beforeAll(async () => {
  ddb = await startDynalite();
  rt = await makeRuntime(ddb.endpoint);
  const dir = mkdtempSync(join(tmpdir(), 'sf-script-'));
  const script = join(dir, 'script.json');
  writeFileSync(
    script,
    JSON.stringify({
      steps: {
        researcher: [
          {
            text: 'Let me look.',
            toolCalls: [
              { tool: 'fs-list', args: { path: '.' } },
              { tool: 'web-search', args: { query: 'x' } },
            ],
          },
          { text: 'Found it: 42.' },
        ],
        greedy: [
          {
            text: 'more',
            toolCalls: [
              { tool: 'fs-list', args: {} },
              { tool: 'fs-list', args: {} },
              { tool: 'fs-list', args: {} },
            ],
          },
        ],
      },
    }),
  );
  scripted = await makeRuntime(ddb.endpoint, {}, {}, { STEPFORGE_LOCAL_SCRIPT: script });
});
afterAll(async () => {
  await rt.close();
  await scripted.close();
  await ddb.stop();
});

describe('Function: createModelHandler', () => {
  it('answers a model step offline with a labelled echo and provider "local"', async () => {
    const h = createModelHandler(rt);
    const r = (await h(
      envelope({ kind: 'model', step: 'plan', config: { prompt: 'Plan ${input.topic}' }, inputs: { value: 'Plan research on whales' } }),
    )) as Record<string, unknown>;
    expect(r.output).toBe('[offline:echo] Plan research on whales');
    expect(r.provider).toBe('local');
    expect(r.status).toBe('succeeded');
  });

  it('adds parent outputs the template does not place as labelled context', async () => {
    const h = createModelHandler(rt);
    const r = (await h(
      envelope({
        kind: 'model',
        step: 'judge',
        config: { prompt: 'Pick the best of ${steps.draft}' },
        inputs: {
          value: 'Pick the best of D1',
          template: 'Pick the best of ${steps.draft}',
          steps: { draft: 'D1', critique: { score: 3 } },
        },
      }),
    )) as Record<string, unknown>;
    expect(r.output).toContain('Pick the best of D1');
    expect(r.output).toContain('--- Output of step "critique" ---');
    expect(r.output).not.toContain('--- Output of step "draft" ---');
  });

  it('fails a consensus judge with JudgeChoiceNotCandidate unless it answers one candidate verbatim', async () => {
    const h = createModelHandler(rt);
    // The offline provider picks a candidate for a judge (the most frequent; the first on a tie).
    const ok = (await h(
      envelope({ kind: 'model', step: 'judge', inputs: { value: 'Pick one', candidates: { a: 'Paris', b: 'Lyon' } } }),
    )) as Record<string, unknown>;
    expect(ok.output).toBe('Paris');
    // A model that paraphrases fails the step.
    const answer = 'a paraphrase of Paris';
    const converse = vi.spyOn(LocalProvider.prototype, 'converse').mockResolvedValueOnce({
      text: answer,
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
      provider: 'local',
      model: 'local:test',
      stopReason: 'end_turn',
    });
    try {
      const runId = `run-judge-${Date.now()}`;
      const err = (await h(
        envelope({ kind: 'model', step: 'judge', runId, inputs: { value: 'Pick one', candidates: { a: 'Paris', b: 'Lyon' } } }),
      ).catch((e: unknown) => e)) as Error;
      expect(err.name).toBe('JudgeChoiceNotCandidate');
      expect(err.message).toBe(
        `step 'judge' must answer with one of the candidates (a, b) verbatim, but answered "${answer}"; tell the judge to repeat one candidate exactly, without edits or commentary`,
      );
      // The failure is on the step record, so `runs retry` re-runs the judge.
      const [record] = await rt.runs.listSteps(runId);
      expect(record).toMatchObject({ stepId: 'judge', status: 'FAILED' });
    } finally {
      converse.mockRestore();
    }
  });

  it('marks an agent turn whose committed answer came back as reused (and a new one not at all)', async () => {
    const h = createModelHandler(rt);
    const env = envelope({
      kind: 'agent',
      step: 'looped',
      tools: ['fs-list'],
      inputs: { value: 'hi' },
      budget: { maxTurns: 2, maxToolCalls: 2 },
      turn: { index: 0 },
    });
    const first = (await h(env)) as Record<string, unknown>;
    expect(first.status).toBeUndefined();
    expect(first.done).toBe(true);
    const again = (await h(env)) as Record<string, unknown>;
    expect(again).toMatchObject({ status: 'reused', done: true, output: first.output });
  });

  it('keeps an output the state machine reads inline up to 32 KiB, and fails above with OutputTooLarge', async () => {
    const h = createModelHandler(rt);
    const mid = 'm'.repeat(20_000);
    const inline = (await h({
      ...envelope({ kind: 'model', step: 'listing', inputs: { value: mid } }),
      readByStateMachine: true,
    })) as Record<string, unknown>;
    expect(inline.output).toBe(`[offline:echo] ${mid}`);
    expect(inline.outputRef).toBeUndefined();
    // The same output for a step nothing in the state machine reads goes by reference (over 4 KiB).
    const byRef = (await h(envelope({ kind: 'model', step: 'listing2', inputs: { value: mid } }))) as Record<string, unknown>;
    expect(byRef.outputRef).toBeDefined();
    const err = (await h({
      ...envelope({ kind: 'model', step: 'huge', inputs: { value: 'h'.repeat(40_000) } }),
      readByStateMachine: true,
    }).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('OutputTooLarge');
    expect(err.message).toMatch(/^step 'huge' returned 40 KiB, but the state machine reads its output itself .* it must stay under 32 KiB/);
  });

  it("refuses STEPFORGE_INLINE_OUTPUT_MAX_BYTES above what the compiler's payload budgets assume", () => {
    expect(runtimeConfigFromEnv({ STEPFORGE_INLINE_OUTPUT_MAX_BYTES: '1024' }).inlineOutputMaxBytes).toBe(1024);
    expect(runtimeConfigFromEnv({}).inlineOutputMaxBytes).toBe(4096);
    expect(() => runtimeConfigFromEnv({ STEPFORGE_INLINE_OUTPUT_MAX_BYTES: '65536' })).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringContaining('STEPFORGE_INLINE_OUTPUT_MAX_BYTES must be at most 4096, got 65536'),
      }),
    );
  });

  it('reads STEPFORGE_CLAIM_AFTER_MS (default 1000); with 0 a first try claims before its body, as every step did before', async () => {
    expect(runtimeConfigFromEnv({}).claimAfterMs).toBe(1000);
    expect(() => runtimeConfigFromEnv({ STEPFORGE_CLAIM_AFTER_MS: 'soon' })).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: 'STEPFORGE_CLAIM_AFTER_MS must be a non-negative number, got "soon"',
      }),
    );
    const eager = await makeRuntime(ddb.endpoint, {}, {}, { STEPFORGE_CLAIM_AFTER_MS: '0' });
    const sent: string[] = [];
    for (const c of new Set([eager.db.client, eager.db.commands])) {
      c.middlewareStack.add(
        (next, context) => async (args) => {
          sent.push(String(context.commandName));
          return next(args);
        },
        { step: 'initialize', name: 'testRequestLog' },
      );
    }
    try {
      const env = { ...envelope({ kind: 'model', step: 'eager', inputs: { value: 'hello' } }), attempt: 0 };
      expect(await createModelHandler(eager)(env)).toMatchObject({ status: 'succeeded' });
      expect(sent).toEqual(['PutItemCommand', 'UpdateItemCommand']);
    } finally {
      await eager.close();
    }
  });

  it('returns the committed output on a retry of the same step instead of calling the model again', async () => {
    const h = createModelHandler(rt);
    const converse = vi.spyOn(LocalProvider.prototype, 'converse');
    try {
      // No `attempt` (an envelope not built by the compiled state machine): the step claims first.
      const env = envelope({ kind: 'model', step: 'once', inputs: { value: 'hello' } });
      const a = (await h(env)) as Record<string, unknown>;
      const b = (await h(env)) as Record<string, unknown>;
      expect(a.status).toBe('succeeded');
      expect(b.status).toBe('reused');
      expect(b.output).toBe(a.output);
      expect(converse).toHaveBeenCalledTimes(1);
    } finally {
      converse.mockRestore();
    }
  });

  it('writes a quick first attempt of a model step to DynamoDB once, with no claim before it; a retry and a fork claim first, so a result already there is returned without a model call', async () => {
    const counted = await makeRuntime(ddb.endpoint);
    // Installed before the runtime's first write: the commands client resolves its stack once.
    const sent: string[] = [];
    for (const c of new Set([counted.db.client, counted.db.commands])) {
      c.middlewareStack.add(
        (next, context) => async (args) => {
          sent.push(String(context.commandName));
          return next(args);
        },
        { step: 'initialize', name: 'testRequestLog' },
      );
    }
    const converse = vi.spyOn(LocalProvider.prototype, 'converse');
    try {
      const h = createModelHandler(counted);
      // As the compiled state machine sends it: the state's first attempt.
      const env = { ...envelope({ kind: 'model', step: 'quick', inputs: { value: 'hello' } }), attempt: 0 };
      expect(await h(env)).toMatchObject({ status: 'succeeded', output: '[offline:echo] hello' });
      expect(sent).toEqual(['PutItemCommand']);
      expect(await counted.runs.getStep(env.run.id, 'quick')).toMatchObject({
        status: 'SUCCEEDED',
        attempts: 1,
        output: '[offline:echo] hello',
      });
      // A Step Functions retry of the state (after an attempt that committed, say): found, not recomputed.
      converse.mockClear();
      sent.length = 0;
      expect(await h({ ...env, attempt: 1 })).toMatchObject({ status: 'reused', output: '[offline:echo] hello' });
      expect(converse).not.toHaveBeenCalled();
      expect(sent[0]).toBe('PutItemCommand');

      const fork = { ...env, run: { ...env.run, id: `${env.run.id}-fork`, parentRunId: env.run.id } };
      sent.length = 0;
      expect(await h(fork)).toMatchObject({ status: 'succeeded' });
      expect(sent).toEqual(['PutItemCommand', 'UpdateItemCommand']);
      converse.mockClear();
      expect(await h(fork)).toMatchObject({ status: 'reused', output: '[offline:echo] hello' });
      expect(converse).not.toHaveBeenCalled();
    } finally {
      converse.mockRestore();
      await counted.close();
    }
  });

  it('runs a scripted agent loop with tool calls, keeping the conversation in DynamoDB', async () => {
    const h = createModelHandler(scripted);
    const base = {
      kind: 'agent' as const,
      step: 'researcher',
      runId: 'run-agent-1',
      tools: ['fs-list', 'web-search'],
      inputs: { value: 'Find the answer' },
      budget: { maxTurns: 4, maxToolCalls: 5 },
    };
    const t0 = (await h(envelope({ ...base, turn: { index: 0 } }))) as Record<string, unknown>;
    expect(t0.done).toBe(false);
    expect(t0.toolCalls).toEqual([
      { id: 'call_0_0', tool: 'fs-list', args: { path: '.' } },
      { id: 'call_0_1', tool: 'web-search', args: { query: 'x' } },
    ]);
    const t1 = (await h(
      envelope({
        ...base,
        budget: { ...base.budget, turnsUsed: 1, toolCallsUsed: 2 },
        turn: {
          index: 1,
          toolResults: [
            { id: 'call_0_0', tool: 'fs-list', result: { entries: [] } },
            { id: 'call_0_1', tool: 'web-search', result: { results: [] } },
          ],
        },
      }),
    )) as Record<string, unknown>;
    expect(t1).toMatchObject({ done: true, output: '[offline:script] Found it: 42.', provider: 'local' });
    const conv = await scripted.conversations.load('run-agent-1#researcher');
    expect(conv.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(conv[0]?.content).toBe('Find the answer');
  });

  it('records a grant of a tool this runtime does not have as ToolNotInstalled on the first turn, naming the closest tool', async () => {
    const h = createModelHandler(rt);
    const base = {
      kind: 'agent' as const,
      step: 'typo',
      runId: 'run-typo-1',
      tools: ['web-serch', 'fs-list', 'mcp.docs.search', 'frobnicate'],
      inputs: { value: 'look' },
      budget: { maxTurns: 4, maxToolCalls: 5 },
    };
    expect(await h({ ...envelope({ ...base, turn: { index: 0 } }), attempt: 0 })).toMatchObject({ done: true });
    const events = await rt.runs.listEvents('run-typo-1');
    expect(events).toEqual([
      expect.objectContaining({
        type: 'ToolNotInstalled',
        stepId: 'typo',
        detail: expect.objectContaining({ tools: ['web-serch', 'frobnicate'] }),
      }),
    ]);
    expect((events[0]!.detail as { message: string }).message).toBe(
      "step typo is granted 'web-serch' (did you mean 'web-search'?), 'frobnicate', which this runtime has no tool for, so the model is not offered them (tools here: echo, fs-list, fs-read, http_fetch, shell, web-search; MCP tools are named mcp.<server>.<tool>)",
    );
    // A retried first turn, and a later turn, say nothing more.
    await h({ ...envelope({ ...base, turn: { index: 0 } }), attempt: 1 });
    await h({ ...envelope({ ...base, turn: { index: 1, toolResults: [] } }), attempt: 0 });
    expect(await rt.runs.listEvents('run-typo-1')).toHaveLength(1);
  });

  it('does not store the conversation of an agent step that answers on its first turn', async () => {
    const h = createModelHandler(rt);
    const t0 = (await h(
      envelope({
        kind: 'agent',
        step: 'oneshot',
        runId: 'run-agent-2',
        tools: ['fs-list'],
        inputs: { value: 'Just answer' },
        budget: { maxTurns: 4, maxToolCalls: 5 },
        turn: { index: 0 },
      }),
    )) as Record<string, unknown>;
    expect(t0).toMatchObject({ done: true, output: '[offline:echo] Just answer', provider: 'local' });
    expect(await rt.conversations.load('run-agent-2#oneshot')).toEqual([]);
  });

  it('enforces the tool-call budget with BudgetExceeded', async () => {
    const h = createModelHandler(scripted);
    const err = await h(
      envelope({
        kind: 'agent',
        step: 'greedy',
        tools: ['fs-list'],
        inputs: { value: 'go' },
        budget: { maxTurns: 4, maxToolCalls: 2 },
        turn: { index: 0 },
      }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('BudgetExceeded');
    expect((err as Error).message).toBe('step greedy asked for 3 tool calls with 2 left of its 2');
  });

  it('enforces the turn budget with BudgetExceeded', async () => {
    const h = createModelHandler(scripted);
    const err = await h(
      envelope({
        kind: 'agent',
        step: 'researcher',
        tools: ['fs-list'],
        inputs: { value: 'go' },
        budget: { maxTurns: 2, maxToolCalls: 9, turnsUsed: 2 },
        turn: { index: 2 },
      }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('BudgetExceeded');
    expect((err as Error).message).toBe('step researcher used its 2 turns');
  });
});
