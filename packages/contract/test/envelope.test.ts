import { describe, expect, it } from 'vitest';
import { ModelTurnResult, StepEnvelope, StepResult, ToolCallResult, isRefValue } from '@stepforge/contract';

const base = {
  version: 1,
  run: { id: 'r1', workflow: 'wf' },
  step: { id: 'plan', kind: 'model', identity: 'abc' },
  config: { model: 'local:echo' },
  inputs: { value: 'hi' },
};

describe('Function: StepEnvelope.parse', () => {
  it('applies defaults for iteration, tools, secrets and inputs.steps', () => {
    const e = StepEnvelope.parse(base);
    expect(e.step.iteration).toEqual([]);
    expect(e.tools).toEqual([]);
    expect(e.secrets).toEqual([]);
    expect(e.inputs.steps).toEqual({});
  });
  it('rejects an unknown step kind with the path of the field', () => {
    const r = StepEnvelope.safeParse({ ...base, step: { ...base.step, kind: 'pure' } });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['step', 'kind']);
  });
  it('rejects a wrong version', () => {
    const r = StepEnvelope.safeParse({ ...base, version: 3 });
    expect(r.error?.issues[0]?.path).toEqual(['version']);
  });
});

describe('Function: StepResult.parse', () => {
  it('accepts an output reference with a sha256 and defaults usage', () => {
    const r = StepResult.parse({ outputRef: { ref: 's3://x', bytes: 10, sha256: 'a'.repeat(64) } });
    expect(r.status).toBe('succeeded');
    expect(r.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
  it('rejects a malformed hash', () => {
    expect(StepResult.safeParse({ outputRef: { ref: 'x', bytes: 1, sha256: 'zz' } }).error?.issues[0]?.path).toEqual([
      'outputRef',
      'sha256',
    ]);
  });
});

describe('Function: ModelTurnResult.parse / ToolCallResult.parse', () => {
  it('carries tool calls with id, tool and args', () => {
    const r = ModelTurnResult.parse({ done: false, toolCalls: [{ id: 'c1', tool: 'web-search', args: { q: 'x' } }] });
    expect(r.toolCalls?.[0]?.tool).toBe('web-search');
  });
  it('requires the call id on a tool result', () => {
    expect(ToolCallResult.safeParse({ tool: 't', result: 1 }).error?.issues[0]?.path).toEqual(['id']);
  });
});

describe('Function: isRefValue', () => {
  it('recognises {"$ref": …} and nothing else', () => {
    expect(isRefValue({ $ref: { ref: 'k', bytes: 3, sha256: 'b'.repeat(64) } })).toBe(true);
    expect(isRefValue({ ref: 'k' })).toBe(false);
  });
});
