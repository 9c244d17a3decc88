// A step whose call went out and never answered (StepOutcomeUnknown): a Slack webhook that took the
// post and dropped the connection. `runs retry` alone would post again; `runs resolve` records the
// outcome a person checked, and the retry then reuses it — the webhook sees one post in all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { bufferIo, tempProject } from './support/testIo.js';

describe('Command: runs resolve (a step whose outcome is unknown)', () => {
  const project = tempProject('sf-resolve-');
  const posts: string[] = [];
  const acks: string[] = [];
  let server: Server;
  let stack: EmbeddedStack;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/hook') {
          // The post arrives and is acted on; the answer never comes back.
          posts.push(body);
          req.socket.destroy();
          return;
        }
        acks.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"acknowledged":true}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_SLACK_WEBHOOK_URL: `${url}/hook`, STEPFORGE_HTTP_ALLOW_HOSTS: new URL(url).host },
    });
    writeFileSync(
      join(project.dir, 'announce.yaml'),
      [
        'document: { dsl: "1.0", name: announce }',
        'steps:',
        '  post: { call: connector, connector: slack, action: send_message, input: { text: "release 9.1 is out" } }',
        `  ack: { call: connector, connector: http, action: request, input: { url: "${url}/ack", body: { via: "\${ steps.post.output.via }" } } }`,
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await stack.close();
    await new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
    project.remove();
  });

  it('suggests resolve rather than a bare retry after StepOutcomeUnknown, records the outcome, and the retry reuses it without posting again', async () => {
    const first = bufferIo(project.dir);
    expect(await main(['run', 'announce.yaml'], first)).toBe(1);
    const out = first.stdout();
    const runId = /run (\S+) \(announce\) started/.exec(out)![1]!;
    expect(out).toContain('error: StepOutcomeUnknown: ');
    expect(out).toContain("  step post's call went out and its outcome is unknown: check the target first.\n");
    expect(out).toContain(
      `    if it went through, record its result, then go on: stepforge runs resolve ${runId} --step post --output '<its result as JSON>'  and  stepforge runs retry ${runId}\n`,
    );
    expect(out).toContain(`    if it did not, call it again: stepforge runs retry ${runId}\n`);
    expect(posts).toHaveLength(1);
    expect(acks).toHaveLength(0);

    // Someone checked the channel: the message is there.
    const resolved = bufferIo(project.dir);
    expect(await main(['runs', 'resolve', runId, '--step', 'post', '--output', '{"ok":true,"via":"webhook"}'], resolved)).toBe(0);
    expect(resolved.stdout()).toBe(
      `resolved step post of run ${runId}: its call to slack incoming webhook is recorded as done, with the output given\n` +
        `  go on from there (the step is not called again): stepforge runs retry ${runId}\n`,
    );
    const step = (await stack.runtime.runs.listSteps(runId)).find((r) => r.stepId === 'post');
    expect(step).toMatchObject({ status: 'SUCCEEDED', output: { ok: true, via: 'webhook' } });
    expect(step?.error).toBeUndefined();
    expect((await stack.runtime.runs.listEvents(runId)).map((e) => [e.type, e.stepId])).toContainEqual(['StepResolved', 'post']);

    // Resolving it again is refused: there is nothing left whose outcome is unknown.
    const again = bufferIo(project.dir);
    expect(await main(['runs', 'resolve', runId, '--step', 'post', '--output', '{}', '--json'], again)).toBe(1);
    expect(JSON.parse(again.stdout()).error).toMatchObject({
      class: 'nothing_to_resolve',
      message: expect.stringContaining("step 'post' of run "),
    });

    const retry = bufferIo(project.dir);
    expect(await main(['runs', 'retry', runId, '--json'], retry)).toBe(0);
    expect(JSON.parse(retry.stdout())).toMatchObject({
      parentRunId: runId,
      status: 'SUCCEEDED',
      output: { status: 200, body: { acknowledged: true } },
    });
    // One post in all; the step after it ran once, with the resolved output.
    expect(posts).toHaveLength(1);
    expect(acks.map((b) => JSON.parse(b) as unknown)).toEqual([{ via: 'webhook' }]);
  });

  it('names a step the run does not have, and what it needs', async () => {
    const run = bufferIo(project.dir);
    await main(['run', 'announce.yaml', '--json'], run);
    const { runId } = JSON.parse(run.stdout()) as { runId: string };
    const unknownStep = bufferIo(project.dir);
    expect(await main(['runs', 'resolve', runId, '--step', 'psot', '--output', '{}', '--json'], unknownStep)).toBe(1);
    expect(JSON.parse(unknownStep.stdout()).error).toMatchObject({
      class: 'unknown_step',
      message: `run '${runId}' has no step 'psot' (its steps: post)`,
    });
    const noOutput = bufferIo(project.dir);
    expect(await main(['runs', 'resolve', runId, '--step', 'post'], noOutput)).toBe(2);
    expect(noOutput.stderr()).toContain('runs resolve needs --step S and --output JSON');
    const badJson = bufferIo(project.dir);
    expect(await main(['runs', 'resolve', runId, '--step', 'post', '--output', '{ok}', '--json'], badJson)).toBe(1);
    expect(JSON.parse(badJson.stdout()).error).toMatchObject({ class: 'invalid_output_json' });
    const wrongFlag = bufferIo(project.dir);
    expect(await main(['runs', 'retry', runId, '--step', 'post'], wrongFlag)).toBe(2);
    expect(wrongFlag.stderr()).toContain('--step goes with runs resolve');
  });
});
