import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, cliIn, tempProject } from './support/testIo.js';

/**
 * A stack.json left by an owner that ended, whose pid now belongs to another live process and
 * whose port another server answers: a command must not take that server for the project's stack
 * (it answered every read with nothing, so `runs list` said "no runs"). The stack's DynamoDB
 * endpoint must answer the stack's own id; this one does not, so the stale claim gives way and the
 * command opens the project's store itself.
 */
describe('Embedded stack: a stale stack.json pointing at another live process', () => {
  const project = tempProject('sf-stale-');
  const cli = cliIn(project.dir);
  let foreign: ChildProcess;
  let port: number;
  const seen = (): string[] => readFileSync(join(project.dir, 'foreign.log'), 'utf8').split('\n').filter(Boolean);
  beforeAll(async () => {
    cpSync(join(REPO, 'workflows'), join(project.dir, 'workflows'), { recursive: true });
    // A server that answers every request with 200 and an empty JSON object, as a DynamoDB
    // endpoint with no items would; it logs what it was asked.
    foreign = spawn(
      process.execPath,
      [
        '-e',
        `
      const fs = require('node:fs');
      const s = require('node:http').createServer((req, res) => {
        fs.appendFileSync(${JSON.stringify(join(project.dir, 'foreign.log'))}, (req.headers['x-amz-target'] || req.method + ' ' + req.url) + '\\n');
        req.resume();
        req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }); res.end('{}'); });
      });
      s.listen(0, '127.0.0.1', () => console.log(s.address().port));
    `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    port = await new Promise<number>((resolve) => foreign.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    writeFileSync(join(project.dir, 'foreign.log'), '');
  });
  afterAll(() => {
    foreign.kill();
    project.remove();
  });

  it("lists the project's runs from its own store, reading nothing from the foreign endpoint", async () => {
    const first = await cli('run', 'workflows/research-brief.chain.yaml', '--input', '{"topic":"tides"}', '--json');
    expect(first.code).toBe(0);
    const { runId } = JSON.parse(first.out) as { runId: string };
    const dataDir = join(project.dir, '.stepforge');
    expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
    const endpoint = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dataDir, 'stack.json'),
      JSON.stringify({
        pid: foreign.pid,
        startedAt: new Date().toISOString(),
        dynamodbEndpoint: endpoint,
        sqsEndpoint: endpoint,
        sfnEndpoint: endpoint,
        leaseEpoch: 1,
        stackId: 'the-stack-that-ended',
        credentials: { accessKeyId: 'AKIDTHEENDEDSTACK', secretAccessKey: 'its-secret' },
        apiToken: 'its-token',
      }),
    );
    writeFileSync(join(dataDir, 'stack.lock'), String(foreign.pid));

    const listed = await cli('runs', 'list', '--json');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.out) as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toEqual([runId]);
    // Asked for the identity only, and nothing else.
    expect(seen()).toEqual(['DynamoDB_20120810.GetItem']);
    // The stale claim is gone with the command that replaced it.
    expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'stack.lock'))).toBe(false);
  });
});

/**
 * The stack.json of another project's live `serve`, copied into this project: its endpoints answer
 * with the stack id the file records, but the stack is the other project's. A command here must
 * neither read that project's runs as its own nor write its runs there; it opens its own store,
 * and the other project's stack and files are left as they are.
 */
describe('Embedded stack: a stack.json copied from another project whose serve is live', () => {
  const x = tempProject('sf-stale-x-');
  const y = tempProject('sf-stale-y-');
  const inX = cliIn(x.dir);
  const inY = cliIn(y.dir);
  let serve: ChildProcess;
  afterAll(async () => {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
    x.remove();
    y.remove();
  });

  it("lists and runs in the project's own store, never the other project's", async () => {
    for (const dir of [x.dir, y.dir]) cpSync(join(REPO, 'workflows'), join(dir, 'workflows'), { recursive: true });
    const runIn = async (cli: typeof inX, topic: string) => {
      const r = await cli('run', 'workflows/research-brief.chain.yaml', '--input', JSON.stringify({ topic }), '--json');
      expect([
        r.code,
        r.err
          .split('\n')
          .filter((l) => l.startsWith('error'))
          .join('\n'),
      ]).toEqual([0, '']);
      return (JSON.parse(r.out) as { runId: string }).runId;
    };
    const listIn = async (cli: typeof inX) => {
      const r = await cli('runs', 'list', '--json');
      expect([r.code, r.err]).toEqual([0, '']);
      return (JSON.parse(r.out) as { runs: { runId: string }[] }).runs.map((x) => x.runId).sort();
    };
    const yFirst = await runIn(inY, 'tides');
    serve = spawn(process.execPath, [join(REPO, 'packages', 'cli', 'bin', 'stepforge.js'), 'serve', '--port', '0'], {
      cwd: x.dir,
      stdio: 'ignore',
    });
    const xStackJson = join(x.dir, '.stepforge', 'stack.json');
    for (let i = 0; i < 1200 && !(existsSync(xStackJson) && JSON.parse(readFileSync(xStackJson, 'utf8')).apiUrl); i++)
      await new Promise((r) => setTimeout(r, 50));
    const xRun = await runIn(inX, 'currents');
    const published = readFileSync(xStackJson, 'utf8');
    writeFileSync(join(y.dir, '.stepforge', 'stack.json'), published, { mode: 0o600 });

    // Before: "no runs" here (X's store answered), and the run below was written into X's store.
    expect(await listIn(inY)).toEqual([yFirst]);
    const ySecond = await runIn(inY, 'waves');
    expect(await listIn(inY)).toEqual([yFirst, ySecond].sort());
    expect(await listIn(inX)).toEqual([xRun]);
    // X's serve still holds its stack, as published; the copy here is gone.
    expect(readFileSync(xStackJson, 'utf8')).toBe(published);
    expect(serve.exitCode).toBe(null);
    expect(existsSync(join(y.dir, '.stepforge', 'stack.json'))).toBe(false);
  }, 180_000);
});
