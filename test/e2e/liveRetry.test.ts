// `stepforge runs retry RUN` of a run that `.run(input, {idempotencyKey})` started in a program that
// has exited since: the CLI loads the workflow again from where the program built it (recorded in
// the compiled workflow) and retries the run, reusing the committed node results.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, STEPFORGE_BIN } from './support/testIo.js';

const ENV = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', STEPFORGE_LOG_LEVEL: 'SILENT' };
const CODE = join(REPO, 'packages', 'cli', 'dist', 'code.js');

describe.skipIf(!existsSync(CODE))('Command: runs retry of a .run() run whose program has exited', () => {
  it('loads the workflow again from the program, stopping it at its .run(), and retries the run reusing the finished nodes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-live-retry-'));
    try {
      // The graph's second node fails until the file `fixed` exists; every call is counted in a file,
      // since the program and the CLI are separate processes.
      writeFileSync(
        join(dir, 'program.mjs'),
        `import { appendFileSync, existsSync } from 'node:fs';
import { stateGraph, END } from ${JSON.stringify(CODE)};
appendFileSync('program.starts', 'x');
const graph = stateGraph()
  .addNode('fetch', (s) => { appendFileSync('fetch.calls', 'x'); return { order: s.id * 10 }; })
  .addNode('ship', (s) => { appendFileSync('ship.calls', 'x'); if (!existsSync('fixed')) throw new Error('carrier down'); return { shipped: s.order }; })
  .addEdge('fetch', 'ship').addEdge('ship', END);
try {
  console.log(JSON.stringify(await graph.run('fetch', { id: 4 }, { idempotencyKey: 'order-4' })));
} catch (e) {
  console.log(JSON.stringify({ error: e.name, message: e.message, runId: e.runId }));
}
appendFileSync('program.ends', 'x');
`,
      );
      const calls = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').length : 0);
      const program = spawnSync(process.execPath, ['program.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: ENV });
      expect([program.status, program.stderr]).toEqual([0, '']);
      const failed = JSON.parse(program.stdout) as { error: string; message: string; runId: string };
      expect(failed).toMatchObject({ error: 'NodeError', message: expect.stringContaining('carrier down') });
      expect([calls('fetch.calls'), calls('ship.calls'), calls('program.ends')]).toEqual([1, 1, 1]);

      writeFileSync(join(dir, 'fixed'), '');
      const retry = spawnSync(process.execPath, [STEPFORGE_BIN, 'runs', 'retry', failed.runId, '--json'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 90_000,
        env: ENV,
      });
      expect([retry.status, retry.stderr, retry.stdout]).toEqual([0, '', expect.any(String)]);
      const retried = JSON.parse(retry.stdout) as { status: string; output: unknown };
      expect(retried.status).toBe('SUCCEEDED');
      expect(retried.output).toMatchObject({ state: { id: 4, order: 40, shipped: 40 }, terminatedBy: 'end' });
      // The program's top level ran again up to its .run(), which started nothing and never settled:
      // it did not go on to its end. `fetch` was not called again: its committed result was reused.
      expect([calls('program.starts'), calls('program.ends')]).toEqual([2, 1]);
      expect([calls('fetch.calls'), calls('ship.calls')]).toEqual([1, 2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('fails with CodeModuleLoadError naming the node and the file when the program no longer builds the workflow there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-live-retry-'));
    try {
      const source = `import { stateGraph, END } from ${JSON.stringify(CODE)};
const graph = stateGraph().addNode('only', () => { throw new Error('always'); }).addEdge('only', END);
try { await graph.run('only', {}, { idempotencyKey: 'k-1' }); } catch (e) { console.log(JSON.stringify({ runId: e.runId })); }
`;
      writeFileSync(join(dir, 'program.mjs'), source);
      const program = spawnSync(process.execPath, ['program.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: ENV });
      const { runId } = JSON.parse(program.stdout) as { runId: string };
      // Moved down two lines: the call site the run recorded builds nothing now.
      writeFileSync(join(dir, 'program.mjs'), `\n\n${source}`);
      const retry = spawnSync(process.execPath, [STEPFORGE_BIN, 'runs', 'retry', runId, '--json'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 90_000,
        env: ENV,
      });
      const shown = JSON.parse(
        spawnSync(process.execPath, [STEPFORGE_BIN, 'runs', 'show', (JSON.parse(retry.stdout) as { runId: string }).runId, '--json'], {
          cwd: dir,
          encoding: 'utf8',
          env: ENV,
        }).stdout,
      ) as { run: { status: string; error?: { name: string; message: string } } };
      expect(shown.run.status).toBe('FAILED');
      expect(shown.run.error).toEqual({
        name: 'CodeModuleLoadError',
        message: expect.stringMatching(
          new RegExp(
            `node 'only': the workflow was started by \\.run\\(\\) in a program that is no longer running, and loading it again from file://.*program\\.mjs:2:\\d+ failed: .*program\\.mjs built no workflow at line 2 when imported again \\(was the program changed since the run started\\?\\)`,
          ),
        ),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
