import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';

// The AWS CLI drives the embedded engine with `--endpoint-url`, as a user would: every operation
// the engine added for versions, aliases, tags, TestState and StartSyncExecution, through the
// CLI's own serializer and parser (botocore), not the JS SDK the other tests use; and the Map Run
// operations (list-map-runs, describe-map-run, update-map-run) on a distributed Map as it runs.

const probe = spawnSync('aws', ['--version'], { encoding: 'utf8' });
const AWS_VERSION = probe.status === 0 ? `${probe.stdout}${probe.stderr}`.trim() : undefined;
const SKIP_REASON = 'skipped: the AWS CLI (`aws`) is not on PATH; install it (Debian: apt-get install awscli) to run this test';
if (!AWS_VERSION) console.warn(`awsCli.test.ts ${SKIP_REASON}`);

const ROLE = 'arn:aws:iam::123456789012:role/test';

/** Items of the `held` Lambda wait here until the test lets them go. */
const held = { running: 0, waiters: [] as (() => void)[] };
const releaseHeld = () => held.waiters.splice(0).forEach((w) => w());

describe.skipIf(!AWS_VERSION)(
  `the AWS CLI against the embedded engine${AWS_VERSION ? ` (${AWS_VERSION.split(' ')[0]})` : ` (${SKIP_REASON})`}`,
  () => {
    let server: EngineServer;
    let home: string;
    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), 'stepforge-awscli-'));
      server = await startEngineServer({
        handlers: {
          async double(e: unknown) {
            return { n: (e as { n: number }).n * 2 };
          },
          async held(e: unknown) {
            if ((e as { hold?: boolean }).hold) {
              held.running++;
              await new Promise<void>((resolve) => held.waiters.push(resolve));
              held.running--;
            }
            return e;
          },
        },
      });
    });
    afterAll(async () => {
      releaseHeld();
      await server.close();
      rmSync(home, { recursive: true, force: true });
    });

    /** Runs `aws stepfunctions …`; resolves with its JSON output, or rejects with its stderr. */
    const aws = (args: string[], endpoint = server.url, extraEnv: Record<string, string> = {}): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        execFile(
          'aws',
          ['stepfunctions', ...args, '--endpoint-url', endpoint, '--output', 'json'],
          {
            env: {
              PATH: process.env.PATH ?? '',
              HOME: home,
              // pyenv's shim finds its Python through these.
              ...(process.env.PYENV_ROOT ? { PYENV_ROOT: process.env.PYENV_ROOT } : {}),
              AWS_ACCESS_KEY_ID: 'local',
              AWS_SECRET_ACCESS_KEY: 'local',
              AWS_DEFAULT_REGION: 'us-east-1',
              AWS_CONFIG_FILE: join(home, 'config'),
              AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
              AWS_PAGER: '',
              AWS_MAX_ATTEMPTS: '1',
              ...extraEnv,
            },
            timeout: 30_000,
          },
          (err, stdout, stderr) => {
            if (err) return reject(new Error(`aws ${args[0]} (endpoint ${endpoint}): ${stderr.trim() || err.message}`));
            resolve(stdout.trim() === '' ? {} : (JSON.parse(stdout) as Record<string, unknown>));
          },
        );
      });
    const awsError = (args: string[]) =>
      aws(args).then(
        () => {
          throw new Error(`aws ${args[0]} succeeded`);
        },
        (e: Error) => e.message,
      );

    it('versions, aliases, qualified ARNs, tags, TestState and StartSyncExecution', async () => {
      const def = (value: string) => JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Result: value, End: true } } });
      const created = await aws([
        'create-state-machine',
        '--name',
        'cli',
        '--type',
        'EXPRESS',
        '--definition',
        def('v1'),
        '--role-arn',
        ROLE,
        '--publish',
        '--version-description',
        'first',
        '--tags',
        JSON.stringify([{ key: 'team', value: 'core' }]),
      ]);
      const sm = created.stateMachineArn as string;
      expect(created.stateMachineVersionArn).toBe(`${sm}:1`);
      const updated = await aws([
        'update-state-machine',
        '--state-machine-arn',
        sm,
        '--definition',
        def('v2'),
        '--publish',
        '--version-description',
        'second',
      ]);
      expect(updated.stateMachineVersionArn).toBe(`${sm}:2`);
      await aws(['update-state-machine', '--state-machine-arn', sm, '--definition', def('v3')]);
      expect(await aws(['publish-state-machine-version', '--state-machine-arn', sm, '--description', 'third'])).toMatchObject({
        stateMachineVersionArn: `${sm}:3`,
      });
      const versions = await aws(['list-state-machine-versions', '--state-machine-arn', sm]);
      expect((versions.stateMachineVersions as { stateMachineVersionArn: string }[]).map((v) => v.stateMachineVersionArn)).toEqual([
        `${sm}:3`,
        `${sm}:2`,
        `${sm}:1`,
      ]);
      expect(await aws(['describe-state-machine', '--state-machine-arn', `${sm}:1`])).toMatchObject({
        stateMachineArn: `${sm}:1`,
        description: 'first',
        definition: def('v1'),
      });

      const alias = await aws([
        'create-state-machine-alias',
        '--name',
        'live',
        '--description',
        'what users get',
        '--routing-configuration',
        JSON.stringify([{ stateMachineVersionArn: `${sm}:1`, weight: 100 }]),
      ]);
      expect(alias.stateMachineAliasArn).toBe(`${sm}:live`);
      await aws([
        'update-state-machine-alias',
        '--state-machine-alias-arn',
        `${sm}:live`,
        '--routing-configuration',
        JSON.stringify([{ stateMachineVersionArn: `${sm}:2`, weight: 100 }]),
      ]);
      expect(await aws(['describe-state-machine-alias', '--state-machine-alias-arn', `${sm}:live`])).toMatchObject({
        name: 'live',
        description: 'what users get',
        routingConfiguration: [{ stateMachineVersionArn: `${sm}:2`, weight: 100 }],
      });
      expect((await aws(['list-state-machine-aliases', '--state-machine-arn', sm])).stateMachineAliases).toMatchObject([
        { stateMachineAliasArn: `${sm}:live` },
      ]);

      // StartSyncExecution: the CLI prefixes `sync-` to the endpoint's host. With the endpoint's user
      // part set, the prefix lands there and the CLI dials 127.0.0.1; with host prefix injection off,
      // there is no prefix at all. Either way through the alias, to the version it routes to.
      const viaUser = await aws(
        ['start-sync-execution', '--state-machine-arn', `${sm}:live`, '--input', '{}'],
        server.url.replace('http://', 'http://sfn@'),
      );
      expect(viaUser).toMatchObject({ status: 'SUCCEEDED', output: '"v2"' });
      const noPrefix = await aws(['start-sync-execution', '--state-machine-arn', `${sm}:1`, '--input', '{}'], server.url, {
        AWS_DISABLE_HOST_PREFIX_INJECTION: 'true',
      });
      expect(noPrefix).toMatchObject({ status: 'SUCCEEDED', output: '"v1"' });

      // A Standard machine: StartExecution by version and by alias ARN; DescribeExecution and
      // DescribeStateMachineForExecution say what ran.
      const std = (await aws(['create-state-machine', '--name', 'cli-std', '--definition', def('s1'), '--role-arn', ROLE, '--publish']))
        .stateMachineArn as string;
      await aws([
        'create-state-machine-alias',
        '--name',
        'prod',
        '--routing-configuration',
        JSON.stringify([{ stateMachineVersionArn: `${std}:1`, weight: 100 }]),
      ]);
      await aws(['update-state-machine', '--state-machine-arn', std, '--definition', def('s2')]);
      const started = await aws(['start-execution', '--state-machine-arn', `${std}:prod`, '--name', 'through-alias']);
      let described: Record<string, unknown> = {};
      for (let i = 0; i < 50; i++) {
        described = await aws(['describe-execution', '--execution-arn', started.executionArn as string]);
        if (described.status !== 'RUNNING') break;
      }
      expect(described).toMatchObject({
        status: 'SUCCEEDED',
        output: '"s1"',
        stateMachineArn: std,
        stateMachineVersionArn: `${std}:1`,
        stateMachineAliasArn: `${std}:prod`,
      });
      expect(await aws(['describe-state-machine-for-execution', '--execution-arn', started.executionArn as string])).toMatchObject({
        stateMachineArn: std,
        definition: def('s1'),
      });
      expect((await aws(['list-executions', '--state-machine-arn', `${std}:prod`])).executions).toMatchObject([{ name: 'through-alias' }]);

      // Deleting a version an alias routes to is refused; after the alias goes, it is not.
      expect(await awsError(['delete-state-machine-version', '--state-machine-version-arn', `${std}:1`])).toContain('ConflictException');
      await aws(['delete-state-machine-alias', '--state-machine-alias-arn', `${std}:prod`]);
      await aws(['delete-state-machine-version', '--state-machine-version-arn', `${std}:1`]);
      expect((await aws(['list-state-machine-versions', '--state-machine-arn', std])).stateMachineVersions).toEqual([]);

      // Tags.
      await aws(['tag-resource', '--resource-arn', sm, '--tags', JSON.stringify([{ key: 'stage', value: 'dev' }])]);
      expect((await aws(['list-tags-for-resource', '--resource-arn', sm])).tags).toEqual([
        { key: 'team', value: 'core' },
        { key: 'stage', value: 'dev' },
      ]);
      await aws(['untag-resource', '--resource-arn', sm, '--tag-keys', 'team']);
      expect((await aws(['list-tags-for-resource', '--resource-arn', sm])).tags).toEqual([{ key: 'stage', value: 'dev' }]);
      expect(await awsError(['list-tags-for-resource', '--resource-arn', `${sm}-gone`])).toContain('ResourceNotFound');

      // TestState with a Lambda task (TestState has the `sync-` host prefix too).
      const tested = await aws(
        [
          'test-state',
          '--role-arn',
          ROLE,
          '--input',
          '{"n":21}',
          '--definition',
          JSON.stringify({ Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:double', Next: 'Report' }),
        ],
        server.url.replace('http://', 'http://sfn@'),
      );
      expect(tested).toMatchObject({ status: 'SUCCEEDED', output: '{"n":42}', nextState: 'Report' });
      // Some forty CLI processes, each starting Python: minutes on a busy machine.
    }, 600_000);

    it('list-map-runs, describe-map-run and update-map-run on a distributed Map while it runs and after', async () => {
      const definition = JSON.stringify({
        StartAt: 'Fan',
        States: {
          Fan: {
            Type: 'Map',
            Label: 'Rows',
            MaxConcurrency: 1,
            ItemProcessor: {
              ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
              StartAt: 'Work',
              States: { Work: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:held', End: true } },
            },
            End: true,
          },
        },
      });
      const sm = (await aws(['create-state-machine', '--name', 'cli-map', '--definition', definition, '--role-arn', ROLE]))
        .stateMachineArn as string;
      const exec = (
        await aws(['start-execution', '--state-machine-arn', sm, '--input', JSON.stringify([{ hold: true }, { n: 1 }, { n: 2 }])])
      ).executionArn as string;
      for (let i = 0; i < 500 && held.running === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(held.running).toBe(1);

      const listed = (await aws(['list-map-runs', '--execution-arn', exec])).mapRuns as Record<string, unknown>[];
      expect(listed).toHaveLength(1);
      const mapRunArn = listed[0]!.mapRunArn as string;
      expect(mapRunArn).toMatch(/^arn:aws:states:us-east-1:123456789012:mapRun:cli-map\/Rows:[0-9a-f-]{36}$/);
      expect(listed[0]).toMatchObject({ executionArn: exec, stateMachineArn: `${sm}/Rows` });
      expect(listed[0]!.stopDate).toBeUndefined();
      expect(await aws(['describe-map-run', '--map-run-arn', mapRunArn])).toMatchObject({
        status: 'RUNNING',
        maxConcurrency: 1,
        toleratedFailureCount: 0,
        toleratedFailurePercentage: 0,
        itemCounts: { running: 1, pending: 2, total: 3 },
      });

      await aws([
        'update-map-run',
        '--map-run-arn',
        mapRunArn,
        '--max-concurrency',
        '2',
        '--tolerated-failure-count',
        '1',
        '--tolerated-failure-percentage',
        '12.5',
      ]);
      const updated = await aws(['describe-map-run', '--map-run-arn', mapRunArn]);
      expect(updated).toMatchObject({ maxConcurrency: 2, toleratedFailureCount: 1, toleratedFailurePercentage: 12.5 });
      releaseHeld();
      let status = 'RUNNING';
      for (let i = 0; i < 50 && status === 'RUNNING'; i++)
        status = (await aws(['describe-execution', '--execution-arn', exec])).status as string;
      expect(status).toBe('SUCCEEDED');
      const done = await aws(['describe-map-run', '--map-run-arn', mapRunArn]);
      expect(done).toMatchObject({
        status: 'SUCCEEDED',
        maxConcurrency: 2,
        itemCounts: { succeeded: 3, running: 0, pending: 0, resultsWritten: 3, total: 3 },
        executionCounts: { succeeded: 3, total: 3 },
      });
      // The CLI prints the wire's epoch seconds.
      expect(done.stopDate as number).toBeGreaterThanOrEqual(done.startDate as number);

      // Each item ran as a child workflow execution, listed by its Map Run.
      const children = (await aws(['list-executions', '--map-run-arn', mapRunArn])).executions as Record<string, unknown>[];
      expect(children).toHaveLength(3);
      expect(children.every((c) => c.status === 'SUCCEEDED' && c.mapRunArn === mapRunArn && c.itemCount === 1)).toBe(true);
      expect(await aws(['describe-execution', '--execution-arn', children[0]!.executionArn as string])).toMatchObject({
        stateMachineArn: `${sm}/Rows`,
        mapRunArn,
      });
      const childEvents = (await aws(['get-execution-history', '--execution-arn', children[0]!.executionArn as string])).events as {
        type: string;
      }[];
      expect(childEvents.map((e) => e.type).at(-1)).toBe('ExecutionSucceeded');

      expect(await awsError(['update-map-run', '--map-run-arn', mapRunArn, '--max-concurrency', '3'])).toContain('ValidationException');
      expect(await awsError(['describe-map-run', '--map-run-arn', exec])).toContain('InvalidArn');
      expect(await awsError(['describe-map-run', '--map-run-arn', mapRunArn.replace(/:[^:]+$/, ':0')])).toContain('ResourceNotFound');
    }, 300_000);
  },
);
