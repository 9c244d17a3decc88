import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, STEPFORGE_BIN } from '../e2e/support/testIo.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));
const PROCESSES = process.env.STEPFORGE_LONG === '1' ? 100 : 32;
const WORKFLOW =
  'chain: "plan@web-search > write"\ninput:\n  n: number\ntasks:\n  plan:\n    kind: model\n    prompt: "plan ${input.n}"\n  write:\n    kind: model\n    prompt: "write ${steps.plan.output}"\n';

/**
 * Many `stepforge run`s started at once on a project with no stack yet: one claims the stack
 * (an O_EXCL lock), the others connect to it, and as owners end the stack is handed on. Each
 * process answers with its run, and none ends in an internal error or a store error.
 */
describe.skipIf(!built)('Durability: concurrent first starts (spawned, built dist/)', () => {
  const project = mkdtempSync(join(tmpdir(), 'sf-concurrent-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it(`starts ${PROCESSES} runs at once on a fresh project: every one succeeds with its run id`, async () => {
    writeFileSync(join(project, 'wf.chain.yaml'), WORKFLOW);
    const started = Date.now();
    const results = await Promise.all(
      Array.from(
        { length: PROCESSES },
        (_, n) =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, [STEPFORGE_BIN, 'run', 'wf.chain.yaml', '--input', JSON.stringify({ n }), '--json'], {
              cwd: project,
              env: { ...process.env, STEPFORGE_LOG_LEVEL: undefined },
            });
            let stdout = '';
            let stderr = '';
            child.stdout.on('data', (d: Buffer) => {
              stdout += d.toString();
            });
            child.stderr.on('data', (d: Buffer) => {
              stderr += d.toString();
            });
            child.once('exit', (code) => resolve({ code, stdout, stderr }));
          }),
      ),
    );
    const ok = results.filter((r) => r.code === 0 && /"status":"SUCCEEDED"/.test(r.stdout));
    const internal = results.filter((r) => /error\[internal\]|internal error:/.test(r.stderr));
    const errors = results.filter((r) => /^error\[/m.test(r.stderr));
    const ids = new Set(ok.map((r) => (JSON.parse(r.stdout) as { runId: string }).runId));
    process.stdout.write(
      `concurrent starts: ${PROCESSES} processes, ${ok.length} succeeded with ${ids.size} run ids, ${internal.length} internal, ${errors.length} errors, ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    expect(errors.map((r) => r.stderr)).toEqual([]);
    expect(internal).toEqual([]);
    // Each process that did not succeed, with what it said (with --json an error is on stdout).
    expect(
      results.filter((r) => !ok.includes(r)).map((r) => ({ code: r.code, stdout: r.stdout.slice(0, 1500), stderr: r.stderr.slice(-1500) })),
    ).toEqual([]);
    expect(ok).toHaveLength(PROCESSES);
    expect(ids.size).toBe(PROCESSES);
  }, 600_000);
});
