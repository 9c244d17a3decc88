// The bundles' cross-spawn (in the MCP SDK's stdio transport) starts a process as cross-spawn does off Windows.
import { createRequire } from 'node:module';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import spawn from '../src/bundled/crossSpawn.js';

const crossSpawn = createRequire(import.meta.url)('cross-spawn') as (c: string, a?: unknown, o?: SpawnOptions) => ChildProcess;

/** What the child printed and how it ended. */
function run(child: ChildProcess): Promise<{ out: string; code: number | null; error?: string }> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', (e: NodeJS.ErrnoException) => resolve({ out, code: null, error: e.code }));
    child.on('close', (code) => resolve({ out, code }));
  });
}

const PRINT = 'process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), v: process.env.SF_V, cwd: process.cwd() }))';

describe('bundled cross-spawn', () => {
  it('passes arguments, environment and working directory as cross-spawn does, leaving the caller’s copies alone', async () => {
    const args = ['-e', PRINT, 'a b', '"q"', '$HOME'];
    const options: SpawnOptions = { env: { ...process.env, SF_V: 'v1' }, cwd: '/' };
    const ours = await run(spawn(process.execPath, args, options));
    const theirs = await run(crossSpawn(process.execPath, args, options));
    expect(ours).toEqual(theirs);
    expect(JSON.parse(ours.out)).toEqual({ argv: ['a b', '"q"', '$HOME'], v: 'v1', cwd: '/' });
    expect(args).toHaveLength(5);
  });

  it('takes options in the place of arguments, and reports a missing command as spawn does', async () => {
    const ours = await run(spawn(process.execPath, { stdio: ['ignore', 'pipe', 'ignore'] }));
    expect(ours.code).toBe(0);
    const missing = await run(spawn('/nonexistent/stepforge-command', []));
    expect(missing).toEqual(await run(crossSpawn('/nonexistent/stepforge-command', [])));
    expect(missing.error).toBe('ENOENT');
  });
});
