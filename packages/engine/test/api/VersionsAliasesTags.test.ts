import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateStateMachineAliasCommand,
  CreateStateMachineCommand,
  DeleteStateMachineAliasCommand,
  DeleteStateMachineCommand,
  DeleteStateMachineVersionCommand,
  DescribeExecutionCommand,
  DescribeStateMachineAliasCommand,
  DescribeStateMachineCommand,
  DescribeStateMachineForExecutionCommand,
  ListExecutionsCommand,
  ListStateMachineAliasesCommand,
  ListStateMachineVersionsCommand,
  ListTagsForResourceCommand,
  PublishStateMachineVersionCommand,
  SFNClient,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateStateMachineAliasCommand,
  UpdateStateMachineCommand,
} from '@aws-sdk/client-sfn';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, syncHostLookup, syncLoopbackHost, type EngineServer } from '@stepforge/engine';
import { sdkError, sfnClient, waitForStatus } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/test';
const result = (value: string) => JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Result: value, End: true } } });

describe('state machine versions, aliases and tags', () => {
  let server: EngineServer;
  let client: SFNClient;
  let dir: string;
  let draw = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stepforge-versions-'));
    server = await startEngineServer({ dataDir: dir, random: () => draw });
    client = sfnClient(server.url);
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes versions on create and update, runs them by version and alias ARN, and keeps them across a restart', async () => {
    const created = await client.send(
      new CreateStateMachineCommand({
        name: 'versioned',
        definition: result('one'),
        roleArn: ROLE,
        publish: true,
        versionDescription: 'first',
        tags: [{ key: 'team', value: 'core' }],
      }),
    );
    const sm = created.stateMachineArn!;
    expect(created.stateMachineVersionArn).toBe(`${sm}:1`);

    const updated = await client.send(
      new UpdateStateMachineCommand({ stateMachineArn: sm, definition: result('two'), publish: true, versionDescription: 'second' }),
    );
    expect(updated.stateMachineVersionArn).toBe(`${sm}:2`);
    // The same revision again: the same version, not a third.
    const again = await client.send(new PublishStateMachineVersionCommand({ stateMachineArn: sm }));
    expect(again.stateMachineVersionArn).toBe(`${sm}:2`);
    expect(await sdkError(client.send(new PublishStateMachineVersionCommand({ stateMachineArn: sm, description: 'other' })))).toMatchObject(
      { name: 'ConflictException' },
    );
    expect(await sdkError(client.send(new PublishStateMachineVersionCommand({ stateMachineArn: sm, revisionId: 'stale' })))).toMatchObject({
      name: 'ConflictException',
      message: expect.stringContaining("'stale' is not the current revision"),
    });

    const v1 = await client.send(new DescribeStateMachineCommand({ stateMachineArn: `${sm}:1` }));
    expect(v1).toMatchObject({ stateMachineArn: `${sm}:1`, description: 'first', definition: result('one') });
    expect(
      (await client.send(new ListStateMachineVersionsCommand({ stateMachineArn: sm }))).stateMachineVersions!.map(
        (v) => v.stateMachineVersionArn,
      ),
    ).toEqual([`${sm}:2`, `${sm}:1`]);

    // The current revision moves on; version 1 still runs what it was published with.
    await client.send(new UpdateStateMachineCommand({ stateMachineArn: sm, definition: result('three') }));
    const byVersion = await client.send(new StartExecutionCommand({ stateMachineArn: `${sm}:1` }));
    const d1 = await waitForStatus(client, byVersion.executionArn!);
    expect(d1).toMatchObject({ output: '"one"', stateMachineVersionArn: `${sm}:1`, stateMachineArn: sm });
    expect(d1.stateMachineAliasArn).toBeUndefined();
    const forExec = await client.send(new DescribeStateMachineForExecutionCommand({ executionArn: byVersion.executionArn! }));
    expect(forExec).toMatchObject({ stateMachineArn: sm, definition: result('one'), revisionId: v1.revisionId });

    const alias = await client.send(
      new CreateStateMachineAliasCommand({
        name: 'prod',
        description: 'live',
        routingConfiguration: [
          { stateMachineVersionArn: `${sm}:1`, weight: 30 },
          { stateMachineVersionArn: `${sm}:2`, weight: 70 },
        ],
      }),
    );
    expect(alias.stateMachineAliasArn).toBe(`${sm}:prod`);
    draw = 0.1; // 10 < 30: version 1
    const low = await client.send(new StartExecutionCommand({ stateMachineArn: `${sm}:prod` }));
    draw = 0.9; // 90 ≥ 30: version 2
    const high = await client.send(new StartExecutionCommand({ stateMachineArn: `${sm}:prod` }));
    expect(await waitForStatus(client, low.executionArn!)).toMatchObject({
      output: '"one"',
      stateMachineVersionArn: `${sm}:1`,
      stateMachineAliasArn: `${sm}:prod`,
    });
    expect(await waitForStatus(client, high.executionArn!)).toMatchObject({
      output: '"two"',
      stateMachineVersionArn: `${sm}:2`,
      stateMachineAliasArn: `${sm}:prod`,
    });
    const throughAlias = await client.send(new ListExecutionsCommand({ stateMachineArn: `${sm}:prod` }));
    expect(throughAlias.executions!.map((e) => e.executionArn).sort()).toEqual([low.executionArn, high.executionArn].sort());
    expect((await client.send(new ListExecutionsCommand({ stateMachineArn: `${sm}:1` }))).executions).toHaveLength(2);

    // A version an alias routes to cannot be deleted; once the alias moves, it can.
    expect(await sdkError(client.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: `${sm}:1` })))).toMatchObject({
      name: 'ConflictException',
      message: expect.stringContaining("the alias 'prod' routes executions to it"),
    });
    await client.send(
      new UpdateStateMachineAliasCommand({
        stateMachineAliasArn: `${sm}:prod`,
        routingConfiguration: [{ stateMachineVersionArn: `${sm}:2`, weight: 100 }],
      }),
    );
    const described = await client.send(new DescribeStateMachineAliasCommand({ stateMachineAliasArn: `${sm}:prod` }));
    expect(described).toMatchObject({
      name: 'prod',
      description: 'live',
      routingConfiguration: [{ stateMachineVersionArn: `${sm}:2`, weight: 100 }],
    });
    expect(described.updateDate).toBeInstanceOf(Date);
    await client.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: `${sm}:1` }));
    expect(await sdkError(client.send(new StartExecutionCommand({ stateMachineArn: `${sm}:1` })))).toMatchObject({
      name: 'StateMachineDoesNotExist',
    });
    // Numbers are not reused after a delete.
    await client.send(new UpdateStateMachineCommand({ stateMachineArn: sm, definition: result('four') }));
    expect((await client.send(new PublishStateMachineVersionCommand({ stateMachineArn: sm }))).stateMachineVersionArn).toBe(`${sm}:3`);

    // Tags: set on create, added, overwritten, removed.
    await client.send(
      new TagResourceCommand({
        resourceArn: sm,
        tags: [
          { key: 'stage', value: 'dev' },
          { key: 'team', value: 'platform' },
        ],
      }),
    );
    await client.send(new UntagResourceCommand({ resourceArn: sm, tagKeys: ['stage'] }));
    expect((await client.send(new ListTagsForResourceCommand({ resourceArn: sm }))).tags).toEqual([{ key: 'team', value: 'platform' }]);

    // Everything above is in the state machine's record: a restarted server has it.
    await server.close();
    server = await startEngineServer({ dataDir: dir });
    client.destroy();
    client = sfnClient(server.url);
    expect(
      (await client.send(new ListStateMachineVersionsCommand({ stateMachineArn: sm }))).stateMachineVersions!.map(
        (v) => v.stateMachineVersionArn,
      ),
    ).toEqual([`${sm}:3`, `${sm}:2`]);
    expect(
      (await client.send(new ListStateMachineAliasesCommand({ stateMachineArn: sm }))).stateMachineAliases!.map(
        (a) => a.stateMachineAliasArn,
      ),
    ).toEqual([`${sm}:prod`]);
    expect((await client.send(new ListTagsForResourceCommand({ resourceArn: sm }))).tags).toEqual([{ key: 'team', value: 'platform' }]);
    expect(await client.send(new DescribeExecutionCommand({ executionArn: high.executionArn! }))).toMatchObject({
      stateMachineAliasArn: `${sm}:prod`,
      stateMachineVersionArn: `${sm}:2`,
    });

    await client.send(new DeleteStateMachineAliasCommand({ stateMachineAliasArn: `${sm}:prod` }));
    expect(await sdkError(client.send(new DescribeStateMachineAliasCommand({ stateMachineAliasArn: `${sm}:prod` })))).toMatchObject({
      name: 'ResourceNotFound',
      message: `Resource not found: '${sm}:prod'`,
    });
    await client.send(new DeleteStateMachineCommand({ stateMachineArn: sm }));
  });

  it('refuses bad routing, names, tags and ARNs with the API error names', async () => {
    const sm = (
      await client.send(new CreateStateMachineCommand({ name: 'refusals', definition: result('x'), roleArn: ROLE, publish: true }))
    ).stateMachineArn!;
    const route = (weight: number, v = 1) => ({ stateMachineVersionArn: `${sm}:${v}`, weight });
    const cases: [unknown, string, string][] = [
      [{ name: 'a', routingConfiguration: [route(60)] }, 'ValidationException', 'the weights add up to 60'],
      [{ name: 'a', routingConfiguration: [route(100, 9)] }, 'ResourceNotFound', `'${sm}:9'`],
      [{ name: 'a', routingConfiguration: [{ stateMachineVersionArn: sm, weight: 100 }] }, 'ValidationException', 'is not a version ARN'],
      [{ name: '42', routingConfiguration: [route(100)] }, 'InvalidName', 'not digits alone'],
      [{ name: 'a', routingConfiguration: [route(50), route(50)] }, 'ValidationException', 'the same version is named twice'],
    ];
    for (const [input, name, message] of cases) {
      expect(await sdkError(client.send(new CreateStateMachineAliasCommand(input as never)))).toMatchObject({
        name,
        message: expect.stringContaining(message),
      });
    }
    await client.send(new CreateStateMachineAliasCommand({ name: 'live', routingConfiguration: [route(100)] }));
    // The same alias again is the same alias; another routing under its name is a conflict.
    await client.send(new CreateStateMachineAliasCommand({ name: 'live', routingConfiguration: [route(100)] }));
    await client.send(new UpdateStateMachineCommand({ stateMachineArn: sm, definition: result('y'), publish: true }));
    expect(
      await sdkError(client.send(new CreateStateMachineAliasCommand({ name: 'live', routingConfiguration: [route(100, 2)] }))),
    ).toMatchObject({ name: 'ConflictException' });

    expect(
      await sdkError(
        client.send(new UpdateStateMachineCommand({ stateMachineArn: sm, definition: result('z'), versionDescription: 'no publish' })),
      ),
    ).toMatchObject({ name: 'ValidationException', message: 'Version description can only be set when publish is true' });
    expect(
      await sdkError(client.send(new TagResourceCommand({ resourceArn: `${sm}:live`, tags: [{ key: 'a', value: 'b' }] }))),
    ).toMatchObject({ name: 'InvalidArn' });
    expect(await sdkError(client.send(new TagResourceCommand({ resourceArn: sm, tags: [{ key: 'aws:x', value: 'b' }] })))).toMatchObject({
      name: 'ValidationException',
    });
    expect(
      await sdkError(
        client.send(
          new TagResourceCommand({ resourceArn: sm, tags: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }),
        ),
      ),
    ).toMatchObject({ name: 'TooManyTags' });
    expect(await sdkError(client.send(new ListTagsForResourceCommand({ resourceArn: sm.replace('refusals', 'nothing') })))).toMatchObject({
      name: 'ResourceNotFound',
    });
    expect(await sdkError(client.send(new DescribeStateMachineCommand({ stateMachineArn: `${sm}:live` })))).toMatchObject({
      name: 'InvalidArn',
      message: expect.stringContaining('DescribeStateMachineAlias'),
    });
    expect(await sdkError(client.send(new StartExecutionCommand({ stateMachineArn: `${sm}:nope` })))).toMatchObject({
      name: 'StateMachineDoesNotExist',
    });
  });

  it('answers StartSyncExecution on the sync- host the SDK builds, through syncHostLookup', async () => {
    const sm = (
      await client.send(
        new CreateStateMachineCommand({ name: 'sync', type: 'EXPRESS', definition: result('fast'), roleArn: ROLE, publish: true }),
      )
    ).stateMachineArn!;
    const agent = new Agent({ lookup: syncHostLookup as never });
    const prefixed = new SFNClient({
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ httpAgent: agent }),
    });
    try {
      const out = await prefixed.send(new StartSyncExecutionCommand({ stateMachineArn: `${sm}:1`, input: '{}' }));
      expect(out).toMatchObject({ status: 'SUCCEEDED', output: '"fast"' });
    } finally {
      prefixed.destroy();
      agent.destroy();
    }
    expect(syncLoopbackHost('sync-127.0.0.1')).toBe('127.0.0.1');
    expect(syncLoopbackHost('sync-localhost')).toBe('localhost');
    expect(syncLoopbackHost('sync-example.com')).toBeUndefined();
    expect(syncLoopbackHost('127.0.0.1')).toBeUndefined();
  });

  it('still refuses a sync- name that is not loopback (DNS rebinding)', async () => {
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          server.url,
          {
            method: 'POST',
            headers: { host, 'x-amz-target': 'AWSStepFunctions.ListStateMachines', 'content-type': 'application/x-amz-json-1.0' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    expect(await status('sync-evil.example')).toBe(403);
    expect(await status(`sync-127.0.0.1:${server.port}`)).toBe(200);
    expect(await status(`sync-localhost:${server.port}`)).toBe(200);
  });
});
