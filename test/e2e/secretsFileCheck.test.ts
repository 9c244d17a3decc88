// A workflow that reads secrets does not start when the secrets file cannot be read as secret id →
// string: `run` names the file, the place and the fix before the stack opens, rather than the run
// failing at the first step that reads a secret after others ran.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo, tempProject } from './support/testIo.js';

const HOOK = [
  'name: hook',
  'chain: "note@web-search > fetch"',
  'tasks:',
  '  note: { kind: model, prompt: "hook" }',
  '  fetch: { kind: tool, tool: http_fetch, args: { url: "$secret:hook-url" } }',
  '',
].join('\n');

describe('Command: run (a workflow that reads secrets)', () => {
  const projects: { dir: string; remove(): void }[] = [];
  afterAll(() => {
    for (const p of projects) p.remove();
  });
  const project = (secrets: string | undefined, file = join('.stepforge', 'secrets.json')) => {
    const p = tempProject('sf-secrets-check-');
    projects.push(p);
    writeFileSync(join(p.dir, 'hook.chain.yaml'), HOOK);
    writeFileSync(
      join(p.dir, 'plain.chain.yaml'),
      HOOK.replace('"$secret:hook-url"', '"http://127.0.0.1:9/x"').replace('note@web-search > fetch', 'note@web-search'),
    );
    if (secrets !== undefined) {
      mkdirSync(join(p.dir, file, '..'), { recursive: true });
      writeFileSync(join(p.dir, file), secrets);
    }
    return p.dir;
  };
  const run = async (dir: string, file: string, env: NodeJS.ProcessEnv = {}) => {
    const io = bufferIo(dir, { STEPFORGE_LOG_LEVEL: 'SILENT', ...env });
    const code = await main(['run', file, '--input', '{}', '--json'], io);
    return { code, out: io.stdout(), err: io.stderr() };
  };

  it('refuses a secrets file that is not JSON at its line and column, before the stack opens', async () => {
    const dir = project('{\n  "hook-url": "http://x",\n  "other": oops\n}\n');
    const r = await run(dir, 'hook.chain.yaml');
    expect(r.code).toBe(1);
    const file = join(dir, '.stepforge', 'secrets.json');
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'invalid_secrets_file',
      file,
      line: 3,
      column: 12,
      message: `the secrets file is not valid JSON; it must be an object of secret id → string, e.g. {"slack_token": "xoxb-…"} (the secrets file ${file}, which this workflow's $secret: references read)`,
      hint: expect.stringContaining('or remove it and give the secrets as STEPFORGE_SECRET_<ID> environment variables; nothing ran'),
    });
    // Nothing ran: no run was stored (the stack, which keeps them in .stepforge/, was never opened).
    expect(existsSync(join(dir, '.stepforge', 'stack.json'))).toBe(false);
  });

  it('refuses the configured secrets file (STEPFORGE_SECRETS_FILE) of another shape, naming the secret', async () => {
    const dir = project('{"hook-url": 42}', 'conf/secrets.json');
    const r = await run(dir, 'hook.chain.yaml', { STEPFORGE_SECRETS_FILE: 'conf/secrets.json' });
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'invalid_secrets_file',
      file: join(dir, 'conf', 'secrets.json'),
      message: expect.stringMatching(/^secret "hook-url" must be a string, got number/),
    });
  });

  it('does not read the secrets file for a workflow that names no secret', async () => {
    const dir = project('not json');
    const r = await run(dir, 'plain.chain.yaml', { STEPFORGE_POLICY: '[]' });
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED' });
  }, 60_000);
});
