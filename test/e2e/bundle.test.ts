import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { REPO, STEPFORGE_BIN, example, spawnStepforge, tempProject } from './support/testIo.js';

const bundled = existsSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge.cjs'));

/**
 * The files a bundle holds, as the build lists them (`<name>.inputs.json`: paths from the repository
 * root, sorted), as one JSON text to search: the bundles are minified, so their text names no module.
 */
function inputsOf(name: string): string {
  return readFileSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', `${name}.inputs.json`), 'utf8');
}

/**
 * The built binary loads the CLI from its one-file bundle with V8's code cache (bin/loadCli.js),
 * and must behave exactly as dist/ does: the same output and exit code for each command, user
 * modules imported (a function step, `asl run --handlers`) with and without a cache, and the
 * cache of a command written on its first run and used on the next.
 */
describe.skipIf(!bundled)('Binary: the bundled CLI and its code cache', () => {
  const project = tempProject('sf-bundle-');
  // This test's own code caches, so that commands other tests run meanwhile do not write them.
  const caches = join(project.dir, 'caches');
  beforeAll(() => {
    mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
    mkdirSync(caches);
    writeFileSync(
      join(project.dir, 'functions', 'user', 'double.mjs'),
      'export default async function (input) { return { doubled: input.n * 2 }; }\n',
    );
    writeFileSync(
      join(project.dir, 'fn.yaml'),
      [
        'document: { dsl: "1.0", name: fn-demo, version: "1" }',
        'functions:',
        '  double: {}',
        'input:',
        '  n: integer',
        'steps:',
        '  twice: { call: function, function: double, input: { n: "${ input.n }" } }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(project.dir, 'handlers.mjs'), "export default { greet: async (e) => ({ greeting: 'hello ' + e.name }) };\n");
    writeFileSync(
      join(project.dir, 'greet.asl.json'),
      JSON.stringify({
        StartAt: 'Greet',
        States: { Greet: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:greet', End: true } },
      }),
    );
    writeFileSync(join(project.dir, 'bad.chain.yaml'), 'chain: "a > [b & c"\ntasks:\n  a: { kind: model }\n');
  });
  afterAll(() => project.remove());

  const stepforge = (mode: 'bundle' | 'dist', ...argv: string[]) =>
    spawnStepforge(
      project.dir,
      {
        ...process.env,
        STEPFORGE_LOG_LEVEL: 'SILENT',
        STEPFORGE_DEBUG_LOADER: '1',
        STEPFORGE_CODE_CACHE_DIR: caches,
        ...(mode === 'dist' ? { STEPFORGE_NO_BUNDLE: '1' } : {}),
      },
      argv,
    );
  /** stderr without the loader's own line, which says where the CLI came from. */
  const loadedFrom = (stderr: string) => /^stepforge loaded from (.*)$/m.exec(stderr)?.[1];
  /** What became of the dynalite worker the launcher started ahead, if it started one. */
  const ahead = (stderr: string) => /^stepforge dynalite worker started ahead: (.*)$/m.exec(stderr)?.[1];
  const rest = (stderr: string) =>
    stderr
      .replace(/^stepforge loaded from .*\n/m, '')
      .replace(/^stepforge dynalite worker started ahead: .*\n/m, '')
      // With --json, the line naming the approval policy in force goes to stderr.
      .replace(/^policy: .*\n/m, '');

  it('is strict code, as the ES modules it was built from are, inside the module wrapper the launcher runs it in', () => {
    // A directive counts only before any statement: a banner line ahead of it would leave all of
    // the bundle in sloppy mode. The file is the script the launcher compiles: the wrapper is in it.
    const text = readFileSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge.cjs'), 'latin1');
    const head = '(function (exports, require, module, __filename, __dirname, __stepforge_import) {';
    expect(text.slice(0, head.length + 14)).toBe(`${head}'use strict';\n`);
    expect(text.endsWith('\n})')).toBe(true);
  });

  it('is ASCII only, so V8 holds its source as a one-byte string (every bundle)', () => {
    const dir = join(REPO, 'packages', 'cli', 'dist', 'bundle');
    const files = readdirSync(dir).filter((f) => f.endsWith('.cjs') && f.startsWith('stepforge'));
    expect(files.sort()).toEqual([
      'stepforge-compile.cjs',
      'stepforge-graph.cjs',
      'stepforge-help.cjs',
      'stepforge-mcp.cjs',
      'stepforge-new.cjs',
      'stepforge-run.cjs',
      'stepforge-secrets.cjs',
      'stepforge-sqs.cjs',
      'stepforge-telemetry.cjs',
      'stepforge-undici.cjs',
      'stepforge-validate.cjs',
      'stepforge.cjs',
    ]);
    for (const f of files) {
      const bundle = readFileSync(join(dir, f), 'latin1');
      const first = /[^\x00-\x7f]/.exec(bundle);
      expect(
        first === null ? 'ascii' : `${f} byte ${first.index}: ${JSON.stringify(bundle.slice(first.index - 40, first.index + 10))}`,
      ).toBe('ascii');
    }
  });

  it('serves the commands that run no workflow from bundles without the AWS SDK or the embedded stack', async () => {
    const dir = join(REPO, 'packages', 'cli', 'dist', 'bundle');
    const table = JSON.parse(readFileSync(join(dir, 'bundles.json'), 'utf8')) as { commands: Record<string, string>; otherwise: string };
    expect([
      table.otherwise,
      table.commands.validate,
      table.commands.graph,
      table.commands.compile,
      table.commands.new,
      table.commands.run,
      table.commands.serve,
    ]).toEqual([
      'stepforge-help',
      'stepforge-validate',
      'stepforge-graph',
      'stepforge-compile',
      'stepforge-new',
      'stepforge-run',
      'stepforge',
    ]);
    for (const name of ['stepforge-help', 'stepforge-validate', 'stepforge-graph', 'stepforge-compile', 'stepforge-new']) {
      const text = inputsOf(name);
      expect({
        name,
        cli: text.includes('packages/cli/dist/main.js'),
        sdk: text.includes('node_modules/@aws-sdk/'),
        engine: text.includes('packages/engine/dist/'),
        fauxqs: text.includes('node_modules/fauxqs/'),
      }).toEqual({ name, cli: true, sdk: false, engine: false, fauxqs: false });
    }
    // --help reads neither the compiler nor zod; validate reads both.
    for (const [name, holds] of [
      ['stepforge-help', false],
      ['stepforge-validate', true],
    ] as const) {
      const text = inputsOf(name);
      expect({ name, compiler: text.includes('packages/compiler/dist/'), zod: text.includes('node_modules/zod/') }).toEqual({
        name,
        compiler: holds,
        zod: holds,
      });
    }
    // A command routed to a bundle that does not hold it fails, naming it (never runs another command).
    const { requireBundle } = createRequire(import.meta.url)(join(REPO, 'packages', 'cli', 'bin', 'loadCli.js')) as {
      requireBundle: (file: string) => unknown;
    };
    const helpCli = requireBundle(join(dir, 'stepforge-help.cjs')) as {
      main: (argv: string[], io: unknown) => Promise<number>;
    };
    const io = { out: () => undefined, err: () => undefined, isTTY: false, cwd: project.dir, env: {} };
    await expect(helpCli.main(['validate', 'bad.chain.yaml'], io)).rejects.toThrow(
      "stepforge: the command 'validate' is not in this bundle",
    );
  });

  it("keeps the SQS emulator, the MCP SDK, undici's pool, the Lambda telemetry and the AWS secret stores out of the command bundles, in side bundles required when first needed", () => {
    const dir = join(REPO, 'packages', 'cli', 'dist', 'bundle');
    for (const name of ['stepforge-run', 'stepforge']) {
      const text = readFileSync(join(dir, `${name}.cjs`), 'utf8');
      const inputs = inputsOf(name);
      expect({
        name,
        fauxqs: inputs.includes('node_modules/fauxqs/'),
        mcp: inputs.includes('node_modules/@modelcontextprotocol/sdk/'),
        undici: inputs.includes('node_modules/undici/'),
        telemetry: /node_modules\/(@aws-lambda-powertools\/(tracer|metrics)|aws-xray-sdk-core)\//.test(inputs),
        secrets: /node_modules\/(@aws-lambda-powertools\/parameters|@aws-sdk\/client-(ssm|secrets-manager))\//.test(inputs),
        requiresSqs: text.includes('require("./stepforge-sqs.cjs").m0'),
        requiresMcp: ['m0', 'm1', 'm2', 'm3'].map((m) => text.includes(`require("./stepforge-mcp.cjs").${m}`)),
        requiresUndici: text.includes('require("./stepforge-undici.cjs").m0'),
        requiresTelemetry: ['m0', 'm1'].map((m) => text.includes(`require("./stepforge-telemetry.cjs").${m}`)),
        requiresSecrets: ['m0', 'm1', 'm2', 'm3'].map((m) => text.includes(`require("./stepforge-secrets.cjs").${m}`)),
      }).toEqual({
        name,
        fauxqs: false,
        mcp: false,
        undici: false,
        telemetry: false,
        secrets: false,
        requiresSqs: true,
        requiresMcp: [true, true, true, true],
        requiresUndici: true,
        requiresTelemetry: [true, true],
        requiresSecrets: [true, true, true, true],
      });
    }
    const req = createRequire(join(dir, 'stepforge.cjs'));
    expect(typeof (req('./stepforge-sqs.cjs') as { m0: { buildApp?: unknown } }).m0.buildApp).toBe('function');
    expect((req('./stepforge-undici.cjs') as { m0: { name?: unknown } }).m0.name).toBe('Pool');
    // Each side bundle's exports, `m0`, `m1`, …, in the order of its specifiers: the named export each import takes.
    const sides: Record<string, string[]> = {
      'stepforge-telemetry.cjs': ['Tracer', 'Metrics'],
      'stepforge-secrets.cjs': ['SSMProvider', 'SSMClient', 'SecretsProvider', 'SecretsManagerClient'],
      'stepforge-mcp.cjs': ['Client', 'StdioClientTransport', 'StreamableHTTPClientTransport', 'CfWorkerJsonSchemaValidator'],
    };
    for (const [file, names] of Object.entries(sides)) {
      const side = req(`./${file}`) as Record<string, Record<string, unknown>>;
      expect({ file, types: names.map((name, i) => typeof side[`m${i}`]![name]) }).toEqual({ file, types: names.map(() => 'function') });
    }
  });

  it("runs zod without its generated parsers in a command's process, set before zod loads", () => {
    // A child process, so that this one's zod is not the one looked at.
    const script = [
      `const { requireBundle } = require(${JSON.stringify(join(REPO, 'packages', 'cli', 'bin', 'loadCli.js'))});`,
      `const cli = requireBundle(${JSON.stringify(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge-validate.cjs'))});`,
      `const io = { out() {}, err() {}, isTTY: false, cwd: ${JSON.stringify(join(REPO, 'examples'))}, env: {} };`,
      "cli.main(['validate', 'quickstart.chain.yaml'], io).then((code) => console.log(JSON.stringify({ code, jitless: globalThis.__zod_globalConfig?.jitless })));",
    ].join('\n');
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out.trim())).toEqual({ code: 0, jitless: true });
  });

  it("reads a parameter from SSM through the secret stores' side bundle, its own SDK client and all", async () => {
    // An SSM endpoint on loopback answering GetParameter as the service does.
    const names: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const name = (JSON.parse(body) as { Name: string }).Name;
        names.push(`${req.headers['x-amz-target'] as string} ${name}`);
        res.setHeader('content-type', 'application/x-amz-json-1.1');
        res.end(JSON.stringify({ Parameter: { Name: name, Type: 'SecureString', Value: 'from-ssm', Version: 1 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const secrets = createRequire(import.meta.url)(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge-secrets.cjs')) as {
        m0: { SSMProvider: new (o: unknown) => { get(name: string, o: unknown): Promise<unknown> } };
        m1: { SSMClient: new (o: unknown) => { destroy(): void } };
      };
      const client = new secrets.m1.SSMClient({
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      });
      expect(await new secrets.m0.SSMProvider({ awsSdkV3Client: client }).get('/app/token', { decrypt: true })).toBe('from-ssm');
      expect(names).toEqual(['AmazonSSM.GetParameter /app/token']);
      client.destroy();
    } finally {
      server.close();
    }
  });

  it('runs the dynalite worker from one file: its requests answered, parse cache on, an in-memory and an on-disk store', async () => {
    const dir = join(REPO, 'packages', 'cli', 'dist', 'bundle');
    const oneFile = readFileSync(join(dir, 'dynalite.cjs'), 'utf8');
    // Every request handler is inside (dynalite requires them by a computed name), and no file of
    // dynalite's folder is required from it.
    const dynaliteDir = dirname(createRequire(join(dir, 'stepforge.cjs')).resolve('dynalite'));
    for (const folder of ['actions', 'validations'])
      for (const file of readdirSync(join(dynaliteDir, folder))) expect(oneFile).toContain(`"node_modules/dynalite/${folder}/${file}"`);
    expect(oneFile).not.toMatch(/require\("dynalite[/"]/);
    const workerCaches = join(project.dir, 'worker-caches');
    mkdirSync(workerCaches);
    for (const store of [undefined, join(project.dir, 'one-file-store')]) {
      // A path dynalite is not at: the worker must not fall back to requiring it.
      const worker = new Worker(join(dir, 'dynaliteWorker.cjs'), {
        workerData: {
          module: join(project.dir, 'no-dynalite-here', 'index.js'),
          expressionCache: join(dir, 'dynaliteExpressionCache.cjs'),
        },
        env: { ...process.env, STEPFORGE_CODE_CACHE_DIR: workerCaches },
      });
      try {
        const listening = await new Promise<{ port?: number; error?: string }>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
          worker.postMessage({ listen: { host: '127.0.0.1', options: store ? { path: store, createTableMs: 0 } : { createTableMs: 0 } } });
        });
        expect(listening.port).toBeGreaterThan(0);
        const { port1, port2 } = new MessageChannel();
        worker.postMessage({ connect: port2 }, [port2]);
        let id = 0;
        const call = (target: string, body: unknown) =>
          new Promise<{ statusCode: number; body: string }>((resolve) => {
            const mine = ++id;
            const onMessage = (m: { id: number; statusCode: number; body: string }) => {
              if (m.id !== mine) return;
              port1.off('message', onMessage);
              resolve(m);
            };
            port1.on('message', onMessage);
            port1.postMessage({ id: mine, target: `DynamoDB_20120810.${target}`, body: JSON.stringify(body) });
          });
        expect(
          (
            await call('CreateTable', {
              TableName: 'runs',
              AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
              KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
              ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
            })
          ).statusCode,
        ).toBe(200);
        // createTableMs: 0 still makes the table ACTIVE on a timer, after the answer.
        await expect
          .poll(
            async () =>
              (JSON.parse((await call('DescribeTable', { TableName: 'runs' })).body) as { Table: { TableStatus: string } }).Table
                .TableStatus,
          )
          .toBe('ACTIVE');
        const put = {
          TableName: 'runs',
          Item: { pk: { S: 'a' }, n: { N: '1' } },
          ConditionExpression: 'attribute_not_exists(#k)',
          ExpressionAttributeNames: { '#k': 'pk' },
        };
        expect((await call('PutItem', put)).statusCode).toBe(200);
        // The second time from the parse cache: the condition still holds, with dynalite's own error.
        const again = await call('PutItem', put);
        expect({ status: again.statusCode, type: (JSON.parse(again.body) as { __type: string }).__type }).toEqual({
          status: 400,
          type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        });
        expect(JSON.parse((await call('GetItem', { TableName: 'runs', Key: { pk: { S: 'a' } } })).body)).toEqual({
          Item: { pk: { S: 'a' }, n: { N: '1' } },
        });
        port1.close();
      } finally {
        // Closed, the worker ends by itself, without terminate().
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage('close');
        expect(await exited).toBe(0);
      }
      // Its code cache, written when the first store closed (named by the file's content).
      const id = readFileSync(join(dir, 'dynalite.id'), 'utf8').trim();
      expect(readdirSync(workerCaches)).toEqual([`dynalite.${id}.v8cache`]);
    }
  }, 60_000);

  it("holds zod's English messages alone, not its other locales", () => {
    for (const name of ['stepforge-validate', 'stepforge-run', 'stepforge']) {
      const text = inputsOf(name);
      expect({
        name,
        en: text.includes('"node_modules/zod/v4/locales/en.js"'),
        fr: text.includes('"node_modules/zod/v4/locales/fr.js"'),
      }).toEqual({
        name,
        en: true,
        fr: false,
      });
    }
  });

  it("holds undici's connection pool without its index (fetch, cookies, WebSocket), in its side bundle", () => {
    // The index costs every stack command ~70 ms to load and nothing uses it (undiciPool.d.ts).
    // esbuild names each CommonJS module it wraps by its path, minified or not.
    const side = readFileSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge-undici.cjs'), 'latin1');
    expect(side).toContain('"node_modules/undici/lib/dispatcher/pool.js"');
    expect(side).not.toContain('"node_modules/undici/index.js"');
    expect(side).not.toContain('"node_modules/undici/lib/web/cookies/index.js"');
  });

  it('answers each command as dist/ does', async () => {
    const commands: string[][] = [
      ['--help'],
      ['graph', example('quickstart.chain.yaml'), '--json'],
      ['validate', 'bad.chain.yaml', '--json'],
      ['validate', 'bad.chain.yaml'],
      ['compile', example('quickstart.chain.yaml'), '--json'],
      ['runs', 'bogus'],
      ['asl', 'run', 'greet.asl.json', '--input', '{"name":"Ada"}', '--handlers', 'handlers.mjs'],
      ['asl', '--help'],
      ['run', '--help'],
      ['run', 'fn.yaml', '-h'],
      ['store', '--help'],
    ];
    for (const argv of commands) {
      const [fromBundle, fromDist] = [await stepforge('bundle', ...argv), await stepforge('dist', ...argv)];
      expect(loadedFrom(fromBundle.stderr), argv.join(' ')).toMatch(/^bundle, code cache (none yet|used)$/);
      expect(loadedFrom(fromDist.stderr)).toBe('dist');
      expect({ argv, code: fromBundle.code, stdout: fromBundle.stdout, stderr: rest(fromBundle.stderr) }).toEqual({
        argv,
        code: fromDist.code,
        stdout: fromDist.stdout,
        stderr: rest(fromDist.stderr),
      });
    }
  }, 180_000);

  it("answers a stack command's --help from the help bundle, which holds no stack", async () => {
    const id = readFileSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge-help.id'), 'utf8').trim();
    const r = await stepforge('bundle', 'run', '--help');
    expect({ code: r.code, stdout: r.stdout.split('\n')[0], ahead: ahead(r.stderr) }).toEqual({
      code: 0,
      stdout:
        'Usage: stepforge run FILE|--chain FILE [--input JSON|@file|-] [--var NAME=VALUE]... [--idempotency-key K] [--export NAME] [--provider P] [--json]',
      ahead: undefined,
    });
    // The code cache of `run` that the help bundle wrote: only that bundle's id names it.
    expect(existsSync(join(caches, `stepforge.run.${id}.v8cache`))).toBe(true);
  });

  it('imports a user function from the bundle, before and after its code cache is written', async () => {
    const id = readFileSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge-run.id'), 'utf8').trim();
    const cache = join(caches, `stepforge.run.${id}.v8cache`);
    const outputs = [];
    for (let i = 0; i < 2; i++) {
      const r = await stepforge('bundle', 'run', 'fn.yaml', '--input', `{"n":${21 + i}}`, '--json');
      expect(rest(r.stderr)).toBe('');
      expect(r.code).toBe(0);
      outputs.push(JSON.parse(r.stdout).output);
      expect(loadedFrom(r.stderr)).toBe(i === 0 ? 'bundle, code cache none yet' : 'bundle, code cache used');
      // The stack took over the worker the launcher started while the bundle loaded.
      expect(ahead(r.stderr)).toBe('taken');
      // Written after the first run of the command.
      expect(existsSync(cache)).toBe(true);
    }
    expect(outputs).toEqual([{ doubled: 42 }, { doubled: 44 }]);
    const again = await stepforge('bundle', 'runs', 'list', '--json');
    expect(again.code).toBe(0);
    expect(ahead(again.stderr)).toBe('taken');
    // Commands that open no stack start no worker.
    expect(ahead((await stepforge('bundle', 'graph', example('quickstart.chain.yaml'))).stderr)).toBeUndefined();
    expect(ahead((await stepforge('bundle', 'runs', '--help')).stderr)).toBeUndefined();
    expect(JSON.parse(again.stdout).runs.map((r: { workflow: string; status: string }) => [r.workflow, r.status])).toEqual([
      ['fn-demo', 'SUCCEEDED'],
      ['fn-demo', 'SUCCEEDED'],
    ]);
  }, 180_000);

  it("starts no dynalite worker ahead for a command that finds the project's stack live (a serve), and connects to it", async () => {
    const serve = spawn(process.execPath, [STEPFORGE_BIN, 'serve', '--port', '0'], {
      cwd: project.dir,
      env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_CODE_CACHE_DIR: caches },
    });
    try {
      await expect.poll(() => existsSync(join(project.dir, '.stepforge', 'stack.json')), { timeout: 60_000, interval: 200 }).toBe(true);
      // Connected as a command of its own (not through the thin client, which loads no bundle at all).
      const r = await spawnStepforge(
        project.dir,
        {
          ...process.env,
          STEPFORGE_LOG_LEVEL: 'SILENT',
          STEPFORGE_DEBUG_LOADER: '1',
          STEPFORGE_CODE_CACHE_DIR: caches,
          STEPFORGE_NO_RELAY: '1',
        },
        ['run', 'fn.yaml', '--input', '{"n":5}', '--json'],
      );
      expect({ code: r.code, output: JSON.parse(r.stdout).output, ahead: ahead(r.stderr) }).toEqual({
        code: 0,
        output: { doubled: 10 },
        ahead: undefined,
      });
    } finally {
      serve.kill('SIGTERM');
      await new Promise((resolve) => serve.once('exit', resolve));
    }
  }, 120_000);

  it("uses a command's cache once written, and writes it whole", async () => {
    await stepforge('bundle', 'graph', example('quickstart.chain.yaml'));
    const second = await stepforge('bundle', 'graph', example('quickstart.chain.yaml'));
    expect(loadedFrom(second.stderr)).toBe('bundle, code cache used');
    // No temporary file left behind by the atomic write.
    expect(readdirSync(caches).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(
      readdirSync(caches)
        .filter((f) => /^stepforge\.graph\.[0-9a-f]{16}\.v8cache$/.test(f))
        .map((f) => readFileSync(join(caches, f)).length > 0),
    ).toEqual([true]);
  }, 120_000);
});
