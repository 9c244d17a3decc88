import { describe, expect, it } from 'vitest';
import { compileDocument } from '@stepforge/compiler';

/** Every Task state's Lambda payload in a definition, by state name (nested Parallel/Map states included). */
function payloads(states: Record<string, any>, out: Record<string, any> = {}): Record<string, any> {
  for (const [name, s] of Object.entries(states)) {
    if (s.Type === 'Task') out[name] = s.Arguments?.Payload ?? s.Arguments;
    for (const b of s.Branches ?? []) payloads(b.States, out);
    if (s.ItemProcessor) payloads(s.ItemProcessor.States, out);
  }
  return out;
}

describe("Lowering: a DSL agent's declared configuration", () => {
  it('travels with every call of the agent, on agent steps and inside multi-agent steps', () => {
    const r = compileDocument(`document: { dsl: "1.0", name: cfg }
agents:
  terse: { model: "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0", instructions: "Be terse." }
  plain: {}
steps:
  one: { call: agent, agent: terse, input_template: "hi" }
  panel:
    call: parallel_analyzer
    analysts: [{ agent: terse, role: skeptic }, { agent: plain, role: fan }]
    aggregator: terse
    input_template: "judge this"
`);
    const byAgent = Object.values(payloads(r.asl.States as Record<string, any>)).map((p: any) => [
      p.step.role ?? p.step.id,
      p.config.agent,
      p.config.agentConfig,
    ]);
    const terse = { model: 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0', instructions: 'Be terse.' };
    expect(byAgent).toEqual(
      expect.arrayContaining([
        ['one', 'terse', terse],
        ['skeptic', 'terse', terse],
        ['fan', 'plain', undefined],
        ['aggregator', 'terse', terse],
      ]),
    );
  });

  it('makes an agent step whose agent declares tools an agent loop granted exactly those tools', () => {
    const r = compileDocument(`document: { dsl: "1.0", name: loop }
agents:
  lister: { tools: [fs-list, fs-read, fs-list] }
  plain: {}
steps:
  look: { call: agent, agent: lister, input_template: "what is here?" }
  say: { call: agent, agent: plain, input_template: "\${ steps.look.output }" }
`);
    const states = r.asl.States as Record<string, any>;
    expect(states.look).toMatchObject({ Type: 'Task', Next: 'look: tool calls?' });
    expect(states.look.Arguments.tools).toEqual(['fs-list', 'fs-read']);
    expect(states.look.Arguments.budget).toMatchObject({ maxTurns: 16, maxToolCalls: 20 });
    expect(states['look: tool calls?'].Type).toBe('Choice');
    expect(states['look: call tools'].ItemProcessor.States['look: tool'].Arguments.Payload.tools).toEqual(['fs-list', 'fs-read']);
    // An agent without tools stays one model call.
    expect(states.say.Type).toBe('Task');
    expect(states.say.Arguments.tools).toBeUndefined();
    expect(Object.keys(states).filter((n) => n.startsWith('say:'))).toEqual([]);
  });
});

describe("Lowering: the MCP servers a DSL agent's tools name", () => {
  it("travel with the agent's turns and tool calls: the declared entries its `mcp.<server>.<tool>` grants name, no others", () => {
    const r = compileDocument(`document: { dsl: "1.0", name: mcp-grants }
mcp_servers:
  calc: { url: "http://127.0.0.1:9/mcp" }
  docs: { command: node, args: [docs.js] }
  unused: { url: "http://127.0.0.1:9/other" }
agents:
  adder: { tools: [mcp.calc.add, "mcp:docs.search", mcp.elsewhere.find, fs-list] }
  lister: { tools: [fs-list] }
steps:
  sum: { call: agent, agent: adder, input_template: "add" }
  look: { call: agent, agent: lister, input_template: "look" }
`);
    const all = Object.values(payloads(r.asl.States as Record<string, any>));
    const servers = { calc: { url: 'http://127.0.0.1:9/mcp' }, docs: { command: 'node', args: ['docs.js'] } };
    expect(all.filter((p: any) => p.step.id === 'sum').map((p: any) => [p.step.kind, p.config.mcpServers])).toEqual([
      ['model', servers],
      ['tool', servers],
    ]);
    expect(all.filter((p: any) => p.step.id === 'look').every((p: any) => p.config.mcpServers === undefined)).toBe(true);
  });
});
