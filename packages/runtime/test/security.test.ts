// The security suite: each of these is refused or comes out clean, against real emulators.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createFunctionHandler } from '../src/handlers/function.js';
import { createModelHandler } from '../src/handlers/model.js';
import { createToolHandler } from '../src/handlers/tool.js';
import { createConnectorHandler } from '../src/handlers/connector.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { envelope } from './envelope.js';
import { json, makeRuntime, startDynalite, startHttpServer, type DynamoEndpoint } from './emulators.js';

const SECRET = 'sk-live-9f8e7d6c5b4a';
let ddb: DynamoEndpoint;
let rt: Runtime;
let root: string;
let outside: string;
let hook: Awaited<ReturnType<typeof startHttpServer>>;

beforeAll(async () => {
  ddb = await startDynalite();
  const base = mkdtempSync(join(tmpdir(), 'sf-sec-'));
  root = join(base, 'work');
  outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(root, 'notes.txt'), 'inside');
  writeFileSync(join(root, 'big.bin'), 'x'.repeat(5000));
  writeFileSync(join(outside, 'secret.txt'), 'outside');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
  symlinkSync(outside, join(root, 'linkdir'));
  const fnDir = join(base, 'user');
  mkdirSync(fnDir);
  writeFileSync(
    join(fnDir, 'leaky.mjs'),
    'export default async function (input, { secrets }) { return { echoed: `token=${secrets.api_token}`, input }; }\n',
  );
  hook = await startHttpServer((_req, res) => json(res, 200, { ok: true }));
  rt = await makeRuntime(
    ddb.endpoint,
    {
      tools: {
        // The webhook target is on loopback: listed, as a project lists the hosts its connectors may reach.
        httpAllowHosts: [new URL(hook.url).host],
        fsRoot: root,
        fsMaxReadBytes: 1000,
        shellEnabled: true,
        shellAllow: ['echo', 'ls'],
        shellDeny: ['rm'],
        maxArgsBytes: 2048,
      },
      userFunctionsDir: fnDir,
      logLevel: 'INFO',
    },
    {},
    { STEPFORGE_SECRET_API_TOKEN: SECRET },
  );
});
afterAll(async () => {
  await rt.close();
  await hook.close();
  await ddb.stop();
});

async function allItems(): Promise<string> {
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const r = await rt.db.doc.send(new ScanCommand({ TableName: rt.db.tableName }));
  return JSON.stringify(r.Items);
}

describe('Security: tool authorisation', () => {
  it('refuses an ungranted tool with ToolNotGranted and records the refusal', async () => {
    const h = createToolHandler(rt);
    const env = envelope({
      kind: 'tool',
      step: 'agent1',
      runId: 'run-sec-1',
      tools: ['fs-list'],
      toolCall: { id: 'c1', tool: 'shell', args: { command: 'ls' } },
    });
    const r = (await h(env)) as { error?: { name: string; message: string } };
    expect(r.error).toEqual({ name: 'ToolNotGranted', message: 'step agent1 is not granted tool "shell" (granted: fs-list)' });
    const events = await rt.runs.listEvents('run-sec-1');
    expect(events.map((e) => e.type)).toEqual(['ToolNotGranted']);
    expect(events[0]?.detail).toMatchObject({ tool: 'shell', callId: 'c1' });
  });

  it('throws ToolNotGranted for a plain tool step whose tool is not in its grants', async () => {
    const h = createToolHandler(rt);
    const err = await h(
      envelope({ kind: 'tool', step: 't', tools: ['fs-list'], config: { tool: 'fs-read', args: { path: 'notes.txt' } } }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ToolNotGranted');
  });

  it('refuses path traversal and symlink escapes from fs-read and fs-list', async () => {
    const h = createToolHandler(rt);
    const call = async (tool: string, path: string) => {
      const r = (await h(
        envelope({
          kind: 'tool',
          step: 'fs',
          runId: 'run-sec-fs',
          tools: [tool],
          toolCall: { id: `c-${tool}-${path}`, tool, args: { path } },
        }),
      )) as { result: unknown; error?: { name: string; message: string } };
      return r;
    };
    expect((await call('fs-read', 'notes.txt')).result).toMatchObject({ content: 'inside' });
    expect((await call('fs-read', '../outside/secret.txt')).error).toEqual({
      name: 'PolicyDenied',
      message: 'path "../outside/secret.txt" is outside the allowed directory',
    });
    expect((await call('fs-read', join(outside, 'secret.txt'))).error?.name).toBe('PolicyDenied');
    expect((await call('fs-read', 'link.txt')).error).toEqual({
      name: 'PolicyDenied',
      message: 'path "link.txt" resolves outside the allowed directory (symlink escape)',
    });
    expect((await call('fs-list', 'linkdir')).error?.message).toBe(
      'path "linkdir" resolves outside the allowed directory (symlink escape)',
    );
    expect((await call('fs-read', 'big.bin')).error).toEqual({
      name: 'PolicyDenied',
      message: '"big.bin" is 5000 bytes, over the 1000-byte read limit',
    });
    const types = (await rt.runs.listEvents('run-sec-fs')).map((e) => e.type);
    expect(types.filter((t) => t === 'PolicyDenied')).toHaveLength(5);
  });

  it('refuses denied commands, command substitution and chaining in the shell tool', async () => {
    const h = createToolHandler(rt);
    const run = async (command: string) =>
      (await h(
        envelope({ kind: 'tool', step: 'sh', tools: ['shell'], toolCall: { id: `c-${command}`, tool: 'shell', args: { command } } }),
      )) as { result: unknown; error?: { name: string; message: string } };
    expect((await run('echo hello')).result).toMatchObject({ exitCode: 0, stdout: 'hello\n' });
    expect((await run('rm -rf /')).error).toEqual({ name: 'PolicyDenied', message: 'command "rm" is denied' });
    expect((await run('cat /etc/passwd')).error).toEqual({ name: 'PolicyDenied', message: 'command "cat" is not in the allowed list' });
    expect((await run('echo $(cat /etc/passwd)')).error).toEqual({
      name: 'PolicyDenied',
      message: 'shell refuses command substitution ($( ))',
    });
    expect((await run('echo `id`')).error?.message).toBe('shell refuses command substitution (backticks)');
    expect((await run('echo a; rm x')).error?.message).toBe('shell refuses command chaining (;)');
    expect((await run('ls && rm x')).error?.message).toBe('shell refuses command chaining (&& / ||)');
    expect((await run('ls | rm')).error?.message).toBe('shell refuses pipes');
    expect((await run('/bin/rm x')).error?.message).toBe('shell refuses program paths ("/bin/rm"); name an allowed program');
  });

  it('refuses oversized tool arguments and an oversized envelope', async () => {
    const h = createToolHandler(rt);
    const r = (await h(
      envelope({ kind: 'tool', step: 'big', tools: ['fs-list'], toolCall: { id: 'c', tool: 'fs-list', args: { path: 'x'.repeat(3000) } } }),
    )) as { error?: { name: string; message: string } };
    expect(r.error?.name).toBe('PolicyDenied');
    expect(r.error?.message).toMatch(/^tool "fs-list" arguments are 30\d\d bytes, over the 2048-byte limit$/);
    const err = await h(envelope({ kind: 'tool', step: 'huge', inputs: { value: 'y'.repeat(300 * 1024) } })).catch((e: unknown) => e);
    expect((err as Error).name).toBe('InvalidEnvelope');
    expect((err as Error).message).toMatch(/^step envelope is \d+ bytes, over the 262144-byte limit$/);
  });

  it('refuses a malformed envelope with InvalidEnvelope naming the bad fields', async () => {
    const h = createModelHandler(rt);
    const err = await h({ version: 3, run: { id: '' }, step: { id: 's', kind: 'teleport' } }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('InvalidEnvelope');
    expect((err as Error).message).toContain('version: ');
    expect((err as Error).message).toContain('run.id: ');
    expect((err as Error).message).toContain('step.kind: ');
    const notObject = await h('hello').catch((e: unknown) => e);
    expect((notObject as Error).name).toBe('InvalidEnvelope');
  });
});

describe('Security: secrets', () => {
  it('keeps a secret out of outputs, run records, idempotency records and logs', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const fn = createFunctionHandler(rt);
      const out = (await fn(
        envelope({
          kind: 'function',
          step: 'leak',
          runId: 'run-sec-secret',
          config: { function: 'leaky' },
          secrets: ['api_token'],
          inputs: { value: { note: 'hi' } },
        }),
      )) as { output: { echoed: string } };
      expect(out.output.echoed).toBe('token=***');
      // A connector sending the secret outward: the target gets it; records and logs do not.
      const conn = createConnectorHandler(rt);
      await conn(
        envelope({
          kind: 'connector',
          step: 'hook',
          runId: 'run-sec-secret',
          config: { connector: 'http', action: 'request' },
          inputs: { value: { url: `${hook.url}/hook`, body: { auth: '$secret:api_token' } } },
        }),
      );
      // An error message carrying the secret is redacted before it leaves the handler.
      const err = await fn(
        envelope({ kind: 'function', step: 'missing', runId: 'run-sec-secret', config: { function: `nope-${SECRET}` } }),
      ).catch((e: unknown) => e);
      expect((err as Error).message).not.toContain(SECRET);
    } finally {
      spy.mockRestore();
    }
    expect(hook.requests[hook.requests.length - 1]?.body).toBe(JSON.stringify({ auth: SECRET }));
    const logText = lines.join('');
    expect(logText).toContain('"runId":"run-sec-secret"');
    expect(logText).toContain('step finished');
    expect(logText).not.toContain(SECRET);
    const items = await allItems();
    expect(items).toContain('token=***');
    expect(items).not.toContain(SECRET);
    const steps = await rt.db.doc.send(
      new QueryCommand({
        TableName: rt.db.tableName,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': 'RUN#run-sec-secret' },
      }),
    );
    expect(steps.Items?.length).toBeGreaterThan(1);
  });
});
