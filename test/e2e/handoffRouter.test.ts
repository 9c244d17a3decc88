// handoff_router with a real model protocol: a stub OpenAI-compatible server on loopback plays the
// agents, and the run hands off (or not) on what the entry agent answers — JSON text, fenced JSON,
// or a transfer_to_<role> tool call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { openStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { bufferIo, tempProject } from './support/testIo.js';

/** The entry agent's answer, as chat-completions `message` fields. */
type Answer = { content?: string | null; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] };

/** Which agent a request is for: each agent's instructions (the system message) name it. */
const AGENTS = ['front desk', 'returns desk', 'billing desk'] as const;

interface Seen {
  readonly agent: string;
  readonly tools: string[];
  readonly user: string;
}

let server: Server;
let baseUrl: string;
let entryAnswer: Answer;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const r = JSON.parse(body) as {
        model: string;
        messages: { role: string; content: string }[];
        tools?: { function: { name: string } }[];
      };
      const system = r.messages.find((m) => m.role === 'system')?.content ?? '';
      const agent = AGENTS.find((a) => system.includes(a)) ?? 'unknown';
      seen.push({
        agent,
        tools: (r.tools ?? []).map((t) => t.function.name),
        user: r.messages
          .filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('\n'),
      });
      const message = agent === 'front desk' ? entryAnswer : { content: `${agent} handled it` };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          model: r.model,
          choices: [
            { message: { role: 'assistant', content: null, ...message }, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const DOC = [
  'document: { dsl: "1.0", name: desk }',
  'agents:',
  '  front: { model: "openai:stub-model", instructions: "You are the front desk." }',
  '  returns_agent: { model: "openai:stub-model", instructions: "You are the returns desk." }',
  '  billing: { model: "openai:stub-model", instructions: "You are the billing desk." }',
  'input: { message: string }',
  'steps:',
  '  route:',
  '    call: handoff_router',
  '    entry_agent: front',
  '    specialists:',
  '      - { agent: returns_agent, role: returns }',
  '      - { agent: billing, role: invoices and refunds }',
  '    input_template: "${ input.message }"',
  'output:',
  '  answer: ${ steps.route.output }',
].join('\n');

/** Runs the desk workflow with `answer` as the entry agent's reply: the run's output and which agents were asked. */
async function runDesk(answer: Answer): Promise<{ output: unknown; status: string; agents: string[]; requests: Seen[] }> {
  entryAnswer = answer;
  seen.length = 0;
  const project = tempProject();
  writeFileSync(join(project.dir, 'desk.yaml'), DOC);
  const env = { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_MODEL_PROVIDER: 'openai', STEPFORGE_OPENAI_BASE_URL: baseUrl };
  const stack = await openStack({ projectDir: project.dir, inMemory: true, env });
  try {
    const io = bufferIo(project.dir, env);
    const code = await main(['run', 'desk.yaml', '--input', '{"message":"I want to send my order back"}', '--json'], io);
    const result = JSON.parse(io.stdout()) as { status: string; output: unknown };
    expect(code, io.stderr()).toBe(0);
    return { ...result, agents: seen.map((s) => s.agent), requests: [...seen] };
  } finally {
    await stack.close();
    project.remove();
  }
}

describe('Function: handoff_router (OpenAI-compatible stub model on loopback)', () => {
  it('hands off when the entry agent answers {"handoff": "<role>"} as text', async () => {
    const run = await runDesk({ content: '{"handoff":"returns"}' });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.agents).toEqual(['front desk', 'returns desk']);
    expect(run.output).toEqual({ answer: 'returns desk handled it' });
    // The entry agent is offered one transfer tool per specialist; a specialist, one per other specialist.
    expect(run.requests[0]!.tools).toEqual(['transfer_to_returns', 'transfer_to_invoices_and_refunds']);
    expect(run.requests[1]!.tools).toEqual(['transfer_to_invoices_and_refunds']);
    // The specialist sees the task and the hand-off it was given.
    expect(run.requests[1]!.user).toContain('I want to send my order back');
    expect(run.requests[1]!.user).toMatch(/"handoff": "returns"/);
  });

  it('hands off on fenced JSON inside prose, naming the specialist by agent name', async () => {
    const run = await runDesk({ content: 'This is a billing matter.\n```json\n{ "handoff": "billing", "reason": "refund" }\n```' });
    expect(run.agents).toEqual(['front desk', 'billing desk']);
    expect(run.output).toEqual({ answer: 'billing desk handled it' });
  });

  it('hands off on a transfer_to_<role> tool call', async () => {
    const run = await runDesk({
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'transfer_to_invoices_and_refunds', arguments: '{"reason":"charged twice"}' } },
      ],
    });
    expect(run.agents).toEqual(['front desk', 'billing desk']);
    expect(run.output).toEqual({ answer: 'billing desk handled it' });
    expect(run.requests[1]!.user).toContain('charged twice');
  });

  it('does not hand off when the entry agent answers itself, or names no specialist', async () => {
    const plain = await runDesk({ content: 'Returns are free within 30 days.' });
    expect(plain.agents).toEqual(['front desk']);
    expect(plain.output).toEqual({ answer: 'Returns are free within 30 days.' });
    const unknown = await runDesk({ content: '{"handoff":"shipping"}' });
    expect(unknown.agents).toEqual(['front desk']);
    expect(unknown.output).toEqual({ answer: '{"handoff":"shipping"}' });
  });
});
