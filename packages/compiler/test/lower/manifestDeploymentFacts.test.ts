// The step manifest carries what the CDK app and the run service need beyond the ASL, for every
// format: edges by id, the input schema, Express as asked and why it was refused, triggers, MCP
// servers, Bedrock models and secrets by handler.
import { describe, expect, it } from 'vitest';
import { agent, codeToIr, compileDocument, compileIr, workflow } from '@stepforge/compiler';

const DSL = `document: { dsl: "1.0", name: Orders, version: "1" }
express: true
agents:
  clerk: { model: "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0", tools: [web-search] }
functions: { charge: {} }
mcp_servers:
  catalog: { url: "https://mcp.example.com/mcp" }
  local: "res://servers/local"
secrets:
  key: $secret:payments/key
  hook: $secret:slack/hook
input:
  order: { type: string, required: true }
triggers:
  - name: placed
    description: New orders
    event_pattern: { source: ["acme.orders"] }
  - event_pattern: { source: ["acme.refunds"] }
    event_bus: default
steps:
  pay: { call: function, function: charge, secrets: { k: key } }
  ask: { call: agent, agent: clerk, after: [pay] }
`;

describe('Function: compileDocument (manifest deployment facts)', () => {
  it("carries a DSL document's deployment settings, its input schema, edges, models and secrets by handler", () => {
    const m = compileDocument(DSL, { file: 'workflows/orders.yaml' }).manifest;
    expect(m.edges).toEqual([['pay', 'ask']]);
    expect(m.inputSchema.fields.map((f) => [f.name, f.type, f.required])).toEqual([['order', 'string', true]]);
    expect(m.triggers).toEqual([
      {
        name: 'placed',
        eventPattern: { source: ['acme.orders'] },
        description: 'New orders',
        location: expect.objectContaining({ file: 'workflows/orders.yaml', line: 17, column: 5, length: 13 }),
      },
      {
        name: 'trigger2',
        eventPattern: { source: ['acme.refunds'] },
        eventBus: 'default',
        location: expect.objectContaining({ line: 18, column: 5 }),
      },
    ]);
    expect(m.mcpServers).toEqual({ catalog: { url: 'https://mcp.example.com/mcp' } });
    expect(m.bedrockModels).toEqual(['anthropic.claude-3-5-haiku-20241022-v1:0']);
    // A step's own secret under its handler; the binding no step names under every step handler the workflow invokes.
    expect(m.secretsByHandler).toEqual({ model: ['slack/hook'], tool: ['slack/hook'], function: ['payments/key', 'slack/hook'] });
    // Compiled without asking: Standard, the request and why it cannot be honoured recorded.
    expect(m.type).toBe('STANDARD');
    expect(m.express).toEqual({ requested: true, blocker: expect.stringMatching(/task token/) });
  });

  it('compiles as requested: Express when the document asks and can, Standard (with the blocker) when it cannot, Standard when it does not ask', () => {
    const plain = 'document: { dsl: "1.0", name: w, version: "1" }\nfunctions: { f: {} }\nsteps:\n  a: { call: function, function: f }\n';
    const asked = compileDocument(`${plain}express: true\n`, { express: 'requested' });
    expect([asked.manifest.type, asked.manifest.express]).toEqual(['EXPRESS', { requested: true }]);
    expect(asked.explain.notes).toContainEqual(expect.stringMatching(/^worst-case history events: \d+ \(express: not bounded\)$/));
    expect(compileDocument(plain, { express: 'requested' }).manifest).toMatchObject({ type: 'STANDARD', express: { requested: false } });
    const blocked = compileDocument(DSL, { express: 'requested' }).manifest;
    expect([blocked.type, blocked.express.blocker]).toEqual(['STANDARD', expect.stringMatching(/^its tool calls wait for a task token/)]);
    expect(() => compileDocument(DSL, { express: true })).toThrowError(expect.objectContaining({ code: 'express_unsupported' }));
  });

  it("carries a chain document's express and triggers, and its edges by handle", () => {
    const m = compileDocument(
      'chain: "plan@web-search > write"\nexpress: false\ntriggers:\n  - event_pattern: { source: [x] }\ntasks:\n  plan: { kind: model, model: "bedrock:amazon.nova-micro-v1:0", prompt: p }\n  write: { kind: model, prompt: w }\n',
      { file: 'c.chain.yaml' },
    ).manifest;
    expect(m.edges).toEqual([['plan', 'write']]);
    expect(m.express).toEqual({ requested: false });
    expect(m.triggers).toEqual([
      { name: 'trigger1', eventPattern: { source: ['x'] }, location: expect.objectContaining({ line: 4, column: 5 }) },
    ]);
    expect(m.bedrockModels).toEqual(['amazon.nova-micro-v1:0']);
    expect([m.mcpServers, m.secretsByHandler, m.inputSchema]).toEqual([{}, {}, { fields: [] }]);
  });

  it('gives a Contenox chain and a workflow in code no deployment settings, and their models', () => {
    const cx = compileDocument(
      JSON.stringify({
        id: 'triage',
        tasks: [{ id: 'classify', handler: 'noop', transition: { branches: [{ operator: 'default', goto: 'end' }] } }],
      }),
      { file: 'triage.json' },
    ).manifest;
    expect([cx.format, cx.edges, cx.triggers, cx.express, cx.mcpServers]).toEqual(['contenox', [], [], { requested: false }, {}]);
    const code = compileIr(
      codeToIr(workflow([agent({ name: 'writer', model: 'bedrock:amazon.nova-lite-v1:0', instructions: 'write' })]), {
        module: '/p/flow.ts',
        exportName: 'flow',
        file: 'flow.ts',
      }),
    ).manifest;
    expect([code.format, code.triggers, code.express, code.bedrockModels]).toEqual([
      'code',
      [],
      { requested: false },
      ['amazon.nova-lite-v1:0'],
    ]);
    expect([code.steps.map((s) => s.kind), code.edges]).toEqual([['code_graph'], []]);
  });
});
