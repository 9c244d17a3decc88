import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeConfigFromEnv } from '../src/config/RuntimeConfig.js';
import { narrowedTool, taskPolicyFor } from '../src/tools/taskToolPolicy.js';
import type { ToolContext } from '../src/tools/ToolDefinition.js';

const root = mkdtempSync(join(tmpdir(), 'sf-taskpol-'));
writeFileSync(join(root, 'f.txt'), 'hello');
const config = runtimeConfigFromEnv({
  STEPFORGE_FS_ROOT: root,
  STEPFORGE_HTTP_ALLOW_HOSTS: 'a.example.com,b.example.com',
  STEPFORGE_SHELL_ALLOW: 'ls,cat',
});
const ctx = { guard: { dispatch: async () => undefined } } as unknown as ToolContext;

async function refusal(p: Promise<unknown>): Promise<{ name: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { name: (e as Error).name, message: (e as Error).message };
  }
  throw new Error('expected a refusal');
}

describe("Function: narrowedTool (a task's tools_policies over the project's policy)", () => {
  it('finds the keys by Contenox tool set or by our tool name, and none for a tool they do not name', () => {
    const step = { tools_policies: { local_fs: { _max_read_bytes: '10' }, shell: { _denied_commands: 'cat' } } };
    expect(taskPolicyFor(step, 'fs-read')).toEqual({ _max_read_bytes: '10' });
    expect(taskPolicyFor(step, 'fs-list')).toEqual({ _max_read_bytes: '10' });
    expect(taskPolicyFor(step, 'shell')).toEqual({ _denied_commands: 'cat' });
    expect(taskPolicyFor(step, 'http_fetch')).toBeUndefined();
  });

  it('never widens: a command the task allows but the project does not is still refused', async () => {
    const shell = await narrowedTool(config, { tools_policies: { local_shell: { _allowed_commands: 'rm,wc,ls' } } }, 'shell');
    expect(await refusal(shell!.run({ command: 'rm f.txt' }, ctx))).toEqual({ name: 'PolicyDenied', message: 'command "rm" is denied' });
    expect(await refusal(shell!.run({ command: 'wc f.txt' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: 'command "wc" is not in the allowed list',
    });
  });

  it("checks a URL against the task's hosts and schemes as well as the project's, before any request", async () => {
    const web = await narrowedTool(
      config,
      { tools_policies: { webtools: { _allowed_hosts: 'a.example.com', _denied_hosts: 'x.a.example.com' } } },
      'http_fetch',
    );
    expect(await refusal(web!.run({ url: 'https://b.example.com/' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: `http_fetch: host b.example.com is not in the allowed hosts (a.example.com) (this task's tools_policies)`,
    });
    expect(await refusal(web!.run({ url: 'https://x.a.example.com/' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: `http_fetch: host x.a.example.com is denied (this task's tools_policies)`,
    });
    const https = await narrowedTool(config, { tools_policies: { webtools: { _allowed_schemes: 'https' } } }, 'http_fetch');
    expect(await refusal(https!.run({ url: 'http://a.example.com/' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: `http_fetch: scheme http is not allowed (this task's tools_policies)`,
    });
  });

  it("caps a read at the lower of the task's and the project's limits, and denies paths by substring", async () => {
    const read = await narrowedTool(
      config,
      { tools_policies: { local_fs: { _max_read_bytes: '3', _denied_path_substrings: 'secret' } } },
      'fs-read',
    );
    expect(await refusal(read!.run({ path: 'f.txt' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: '"f.txt" is 5 bytes, over the 3-byte read limit',
    });
    expect(await refusal(read!.run({ path: 'my-secret.txt' }, ctx))).toEqual({
      name: 'PolicyDenied',
      message: `fs-read: path "my-secret.txt" contains "secret", which is denied (this task's tools_policies)`,
    });
    const unlimited = await narrowedTool(config, { tools_policies: { local_fs: { _max_read_bytes: '-1' } } }, 'fs-read');
    expect(await unlimited!.run({ path: 'f.txt' }, ctx)).toMatchObject({ content: 'hello' });
  });
});
