import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, STEPFORGE_BIN, spawnStepforge, tempProject } from '../e2e/support/testIo.js';

/**
 * `runs show ID --open` against the built CLI and a real `serve` of the project: it opens the run's
 * page with $BROWSER (here a script that writes down what it was asked to open), signed in with a
 * one-time code that the page trades for the token once.
 */
describe('Command: runs show --open', () => {
  const project = tempProject('sf-open-');
  let serve: ChildProcess;
  let url = '';
  const opened = join(project.dir, 'opened.txt');
  const browser = join(project.dir, 'browser.sh');
  const env = () => ({ ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', BROWSER: browser });

  beforeAll(async () => {
    mkdirSync(join(project.dir, 'workflows'));
    cpSync(join(REPO, 'examples', 'quickstart.chain.yaml'), join(project.dir, 'workflows', 'quickstart.chain.yaml'));
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(browser, 0o755);
    // Before serve: nothing serves the page.
    const none = await spawnStepforge(project.dir, env(), ['runs', 'show', 'x', '--open', '--json']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error).toMatchObject({
      class: 'serve_not_running',
      message: 'no stepforge serve serves this project: the execution view is a page of serve',
    });
    serve = spawn(process.execPath, [STEPFORGE_BIN, 'serve', '--port', '0'], {
      cwd: project.dir,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    serve.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 90_000;
    let m: RegExpExecArray | null = null;
    // The two banner lines may arrive in separate reads: wait for the second as well.
    while (!(m = /Stepforge API\s+(\S+)[^]*Execution view .*\n/.exec(out))) {
      if (serve.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    url = m[1]!;
    expect(out).toContain(`Execution view     ${url}/   (stepforge runs show ID --open opens a run there, signed in)\n`);
  });
  afterAll(async () => {
    if (serve && serve.exitCode === null) {
      const ended = new Promise((r) => serve.once('exit', r));
      serve.kill('SIGINT');
      await ended;
    }
    project.remove();
  });

  it("opens the run's page with a one-time sign-in code, never the token", async () => {
    const { apiToken } = JSON.parse(readFileSync(join(project.dir, '.stepforge', 'stack.json'), 'utf8')) as { apiToken: string };
    const started = await fetch(`${url}/workflows/quickstart/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { topic: 'tides' }, wait: true }),
    });
    const { runId } = (await started.json()) as { runId: string };
    const r = await spawnStepforge(project.dir, env(), ['runs', 'show', runId, '--open']);
    expect([r.code, r.stdout]).toEqual([0, `opened ${url}/#/runs/${runId} in the browser\n`]);
    for (let i = 0; i < 100 && !existsSync(opened); i++) await new Promise((res) => setTimeout(res, 50));
    const link = readFileSync(opened, 'utf8');
    const m = new RegExp(`^${url.replace(/[.]/g, '\\.')}/#/runs/${runId}\\?code=([A-Za-z0-9_-]+)$`).exec(link);
    expect(m).not.toBeNull();
    expect(link).not.toContain(apiToken);
    const redeem = () => fetch(`${url}/view/session`, { method: 'POST', body: JSON.stringify({ code: m![1] }) });
    const first = await redeem();
    expect([first.status, await first.json()]).toEqual([200, { token: apiToken }]);
    expect((await redeem()).status).toBe(401);
  });

  it('names an unknown run, and refuses --open on another subcommand', async () => {
    const r = await spawnStepforge(project.dir, env(), ['runs', 'show', 'no-such-run', '--open', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ class: 'unknown_run', message: "no run with id 'no-such-run'" });
    const u = await spawnStepforge(project.dir, env(), ['runs', 'list', '--open']);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('--open goes with runs show');
  });
});
