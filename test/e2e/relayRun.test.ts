import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { REPO, STEPFORGE_BIN, example, spawnStepforge, tempProject, type SpawnedRun } from './support/testIo.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));

/**
 * `stepforge run` with the project's `serve` up runs on that serve through a thin client
 * (bin/relayRun.js, serve's POST /cli/run): the user sees what `run` prints, with its exit code,
 * and the client loads no bundle (the loader's debug line says which path ran).
 */
describe.skipIf(!built)('Binary: run through the live serve (thin client)', () => {
  const project = tempProject('sf-relay-');
  let serve: ChildProcess;
  const env = (extra: Record<string, string> = {}) => ({
    ...process.env,
    STEPFORGE_LOG_LEVEL: 'SILENT',
    STEPFORGE_DEBUG_LOADER: '1',
    ...extra,
  });
  const stepforge = (...argv: string[]) => spawnStepforge(project.dir, env(), argv);
  /** The same command run in its own process, connected to the serve's stack as before. */
  const connected = (...argv: string[]) => spawnStepforge(project.dir, env({ STEPFORGE_NO_RELAY: '1' }), argv);
  const relayed = (r: SpawnedRun) => r.stderr.includes("stepforge ran the command on the project's serve (thin client)\n");
  const loadedHere = (r: SpawnedRun) => /stepforge loaded from /.test(r.stderr);
  /** stderr without the loader's debug lines. */
  const userErr = (r: SpawnedRun) =>
    r.stderr
      .split('\n')
      .filter(
        (l) => !l.startsWith('stepforge ran the command') && !l.startsWith('stepforge loaded from') && !l.startsWith('stepforge dynalite'),
      )
      .join('\n');

  beforeAll(async () => {
    copyFileSync(example('quickstart.chain.yaml'), join(project.dir, 'quickstart.chain.yaml'));
    serve = spawn(process.execPath, [STEPFORGE_BIN, 'serve', '--port', '0'], { cwd: project.dir, env: env(), stdio: 'ignore' });
    const stackJson = join(project.dir, '.stepforge', 'stack.json');
    const apiUrl = () => {
      try {
        return (JSON.parse(readFileSync(stackJson, 'utf8')) as { apiUrl?: unknown }).apiUrl;
      } catch {
        return undefined;
      }
    };
    for (let i = 0; i < 600 && typeof apiUrl() !== 'string'; i++) await new Promise((r) => setTimeout(r, 100));
    if (typeof apiUrl() !== 'string') throw new Error('serve did not publish its API in 60 s');
  }, 90_000);

  afterAll(async () => {
    serve.kill('SIGTERM');
    await new Promise((resolve) => serve.once('exit', resolve));
    project.remove();
  });

  it('runs the workflow on serve and prints what run prints, loading no bundle', async () => {
    const r = await stepforge('run', 'quickstart.chain.yaml', '--input', '{"topic":"tide pools"}', '--json');
    const c = await connected('run', 'quickstart.chain.yaml', '--input', '{"topic":"tide pools"}', '--json');
    const shape = (x: SpawnedRun) => {
      const v = JSON.parse(x.stdout) as { status: string; output: unknown; reused: boolean; runId: string };
      return { code: x.code, status: v.status, output: v.output, reused: v.reused, err: userErr(x) };
    };
    expect({ relayed: relayed(r), loadedHere: loadedHere(r) }).toEqual({ relayed: true, loadedHere: false });
    expect({ relayed: relayed(c), loadedHere: loadedHere(c) }).toEqual({ relayed: false, loadedHere: true });
    expect(shape(r)).toEqual(shape(c));
    expect(shape(r)).toMatchObject({ code: 0, status: 'SUCCEEDED', reused: false });
    expect(String(shape(r).output)).toContain('Plan a short research note on tide pools');
  }, 120_000);

  it('prints the progress and the result as a run does, and a failing command its error and exit code', async () => {
    const r = await stepforge('run', 'quickstart.chain.yaml', '--input', '{"topic":"kelp"}');
    expect(relayed(r)).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^policy: none \(no policy\.json found; every granted tool call is allowed\)\nrun [0-9a-f-]{36} \(quickstart\) started\n/,
    );
    expect(r.stdout).toMatch(/\nSUCCEEDED {2}run [0-9a-f-]{36} {2}\d+ ms {2}\d+ tokens\noutput:\n\[offline:echo\] Revise the draft/);
    expect(userErr(r)).toBe('');

    for (const argv of [['run', 'missing.yaml'], ['run'], ['run', 'quickstart.chain.yaml', '--input', '{bad']]) {
      const here = await connected(...argv);
      const there = await stepforge(...argv);
      expect({ argv, relayed: relayed(there), code: there.code, out: there.stdout, err: userErr(there) }).toEqual({
        argv,
        relayed: true,
        code: here.code,
        out: here.stdout,
        err: userErr(here),
      });
    }
    const missing = await stepforge('run', 'missing.yaml');
    expect({ code: missing.code, err: userErr(missing) }).toEqual({
      code: 1,
      err: 'error[file_not_found] missing.yaml:1:1: cannot read missing.yaml: ENOENT\n',
    });
  }, 120_000);

  it('sends piped standard input when the run reads it', async () => {
    const r = await promisify(execFile)(
      'sh',
      ['-c', `printf '{"topic":"sea stars"}' | "${process.execPath}" "${STEPFORGE_BIN}" run quickstart.chain.yaml --json`],
      { cwd: project.dir, env: env() },
    );
    expect(r.stderr).toContain('(thin client)');
    expect((JSON.parse(r.stdout) as { output: string }).output).toContain('Plan a short research note on sea stars');
  }, 120_000);

  it('runs the command itself for options that need a stack of its own, and when serve refuses', async () => {
    const inMemory = await stepforge('run', 'quickstart.chain.yaml', '--in-memory', '--input', '{"topic":"x"}', '--json');
    expect({ code: inMemory.code, relayed: relayed(inMemory), loadedHere: loadedHere(inMemory) }).toEqual({
      code: 0,
      relayed: false,
      loadedHere: true,
    });
    // A token that is not the serve's: refused with 401, so the command runs here, connected to the stack.
    const stackFile = join(project.dir, '.stepforge', 'stack.json');
    const original = readFileSync(stackFile, 'utf8');
    try {
      writeFileSync(stackFile, JSON.stringify({ ...JSON.parse(original), apiToken: 'not-the-token' }));
      const r = await stepforge('run', 'quickstart.chain.yaml', '--input', '{"topic":"x"}', '--json');
      expect({ code: r.code, relayed: relayed(r), loadedHere: loadedHere(r) }).toEqual({ code: 0, relayed: false, loadedHere: true });
    } finally {
      writeFileSync(stackFile, original);
    }
  }, 120_000);

  it("refuses a request that is not a run's, or from another directory, before anything runs", async () => {
    const { apiUrl, apiToken } = JSON.parse(readFileSync(join(project.dir, '.stepforge', 'stack.json'), 'utf8')) as {
      apiUrl: string;
      apiToken: string;
    };
    const post = async (body: unknown, token = apiToken) => {
      const res = await fetch(`${apiUrl}/cli/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
    };
    const other = tempProject('sf-relay-other-');
    mkdirSync(join(other.dir, 'sub'));
    try {
      const valid = { argv: ['quickstart.chain.yaml'], cwd: other.dir, env: {}, isTTY: false, stdinPiped: false };
      expect(await post(valid)).toMatchObject({ status: 409, body: { error: { code: 'wrong_project' } } });
      expect(await post('not json')).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_request', message: 'the body is not JSON' } },
      });
      expect(await post({ ...valid, argv: [1] })).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_request', message: '"argv" must be an array of strings' } },
      });
      expect(await post({ ...valid, cwd: project.dir }, 'wrong')).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    } finally {
      other.remove();
    }
  }, 60_000);
});
