// A Contenox task's own tools_policies narrow the project's tool policy at run time (never widen
// it): through the real CLI, a denied command is refused by name, an allowed one runs, `_allowed_dir`
// confines the shell and the filesystem tools, and `_max_read_bytes` caps a read.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stepforgeWithStdin, tempProject } from './support/testIo.js';

const stepforge = stepforgeWithStdin;

/** A one-task chain calling `set`'s tool with `args`, under the task's `policies`. */
function toolChain(set: string, toolName: string, args: Record<string, unknown>, policies: Record<string, unknown>): string {
  return JSON.stringify(
    {
      id: 'pol',
      tasks: [
        {
          id: 'call',
          handler: 'tools',
          tools: { name: set, tool_name: toolName, args },
          execute_config: { tools_policies: policies },
          transition: { branches: [{ operator: 'default', goto: 'end' }] },
        },
      ],
    },
    null,
    2,
  );
}

describe('Contenox tools_policies (embedded, real CLI)', () => {
  const project = tempProject('sf-cxpol-');
  afterAll(() => project.remove());
  writeFileSync(join(project.dir, 'policy.json'), '[]');
  mkdirSync(join(project.dir, 'sub'));
  writeFileSync(join(project.dir, 'sub', 'small.txt'), 'small\n');
  writeFileSync(join(project.dir, 'big.txt'), 'x'.repeat(3000));
  const shellPolicy = { local_shell: { _allowed_commands: 'ls,cat', _denied_commands: 'echo' } };

  const run = (name: string, chain: string) => {
    writeFileSync(join(project.dir, name), chain);
    const r = stepforge(project.dir, ['run', name, '--json'], 'x');
    const result = JSON.parse(r.out) as { runId: string; status: string; output: unknown };
    const shown = JSON.parse(stepforge(project.dir, ['runs', 'show', result.runId, '--json']).out) as {
      run: { error?: { name: string; message: string } };
    };
    return { code: r.code, result, error: shown.run.error };
  };

  it('refuses a command the task denies, by name, though the project allows it', () => {
    const r = run('deny.json', toolChain('local_shell', 'local_shell', { command: 'echo PWNED' }, shellPolicy));
    expect(r.code).toBe(1);
    expect(r.result.status).toBe('FAILED');
    expect(r.error).toEqual({
      name: 'PolicyDenied',
      message: `step 'call' failed: shell: command "echo" is denied (this task's tools_policies)`,
    });
  }, 120_000);

  it('refuses a command outside the task allow-list, and runs one inside it', () => {
    const outside = run('outside.json', toolChain('local_shell', 'local_shell', { command: 'wc -c sub/small.txt' }, shellPolicy));
    expect(outside.error?.name).toBe('PolicyDenied');
    expect(outside.error?.message).toContain('command "wc" is not in the allowed list (ls, cat)');
    const inside = run('inside.json', toolChain('local_shell', 'local_shell', { command: 'ls sub' }, shellPolicy));
    expect(inside.code).toBe(0);
    expect(inside.result).toMatchObject({ status: 'SUCCEEDED', output: { exitCode: 0, stdout: 'small.txt\n' } });
  }, 120_000);

  it('confines the shell and the filesystem tools to _allowed_dir', () => {
    const shell = run(
      'shelldir.json',
      toolChain('local_shell', 'local_shell', { command: 'cat ../big.txt' }, { local_shell: { _allowed_dir: 'sub' } }),
    );
    expect(shell.error?.name).toBe('PolicyDenied');
    expect(shell.error?.message).toContain('../big.txt');
    const ok = run(
      'shellok.json',
      toolChain('local_shell', 'local_shell', { command: 'cat small.txt' }, { local_shell: { _allowed_dir: 'sub' } }),
    );
    expect(ok.result).toMatchObject({ status: 'SUCCEEDED', output: { stdout: 'small\n' } });
    const fs = run('fsdir.json', toolChain('local_fs', 'read_file', { path: '../big.txt' }, { local_fs: { _allowed_dir: './sub' } }));
    expect(fs.error?.name).toBe('PolicyDenied');
    // An _allowed_dir outside the project's directory cannot narrow it: every call is refused.
    const wider = run('fswide.json', toolChain('local_fs', 'read_file', { path: 'big.txt' }, { local_fs: { _allowed_dir: '..' } }));
    expect(wider.error?.name).toBe('PolicyDenied');
    expect(wider.error?.message).toContain(`_allowed_dir ".." is not a directory inside the project's allowed directory`);
  }, 200_000);

  it('caps a read at _max_read_bytes', () => {
    const capped = run('cap.json', toolChain('local_fs', 'read_file', { path: 'big.txt' }, { local_fs: { _max_read_bytes: '1024' } }));
    expect(capped.error).toEqual({
      name: 'PolicyDenied',
      message: `step 'call' failed: "big.txt" is 3000 bytes, over the 1024-byte read limit`,
    });
    const under = run(
      'under.json',
      toolChain('local_fs', 'read_file', { path: 'sub/small.txt' }, { local_fs: { _max_read_bytes: '1024' } }),
    );
    expect(under.result).toMatchObject({ status: 'SUCCEEDED', output: { content: 'small\n' } });
  }, 120_000);

  it('refuses an unknown policy key before the run, at its line and column', () => {
    writeFileSync(
      join(project.dir, 'typo.json'),
      toolChain('local_shell', 'local_shell', { command: 'ls' }, { local_shell: { _alowed_commands: 'ls' } }),
    );
    const r = stepforge(project.dir, ['validate', 'typo.json', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'unknown_policy_key',
      file: 'typo.json',
      line: 17,
      column: 33,
      message:
        "task 'call': tools_policies.local_shell has key '_alowed_commands', which local_shell does not define (did you mean '_allowed_commands'?)",
    });
  }, 60_000);
});
