// `.run()` in a user's program: the workflow the program built is compiled and run on an embedded
// in-memory stack, and the promise resolves to the SDK's result shape.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agent, agentNode, END, parallel, stateGraph, workflow } from '../../packages/cli/src/code.js';
import { REPO } from './support/testIo.js';

const echo = (name: string) => agent({ name, model: 'local:echo' });

describe('Method: workflow(...).run (embedded)', () => {
  it('runs the steps in order and resolves to { output, steps, stoppedEarly }', async () => {
    const flow = workflow([
      echo('first'),
      { agent: echo('second'), transform: (prev) => `again: ${String(prev)}` },
      { agent: echo('skipped'), when: () => false },
    ]);
    const r = await flow.run('hello');
    expect(r).toEqual({
      output: '[offline:echo] again: [offline:echo] hello',
      steps: [
        { agent: 'first', output: '[offline:echo] hello' },
        { agent: 'second', output: '[offline:echo] again: [offline:echo] hello' },
        { agent: 'skipped', skipped: true },
      ],
      stoppedEarly: false,
    });
  });

  it('runs an agent granted tools as its agent loop (the offline model answers on its first turn)', async () => {
    const r = await workflow([agent({ name: 'researcher', model: 'local:echo', tools: ['fs-list'] })]).run('list the files');
    expect(r).toEqual({
      output: '[offline:echo] list the files',
      steps: [{ agent: 'researcher', output: '[offline:echo] list the files' }],
      stoppedEarly: false,
    });
  });

  it('rejects with ParallelAllFailed when every branch of a group fails', async () => {
    const boom = () => {
      throw new Error('no input for you');
    };
    const flow = workflow([
      parallel([
        { agent: echo('a'), transform: boom },
        { agent: echo('b'), transform: boom },
      ]),
    ]);
    await expect(flow.run('x')).rejects.toMatchObject({
      name: 'ParallelAllFailed',
      message: expect.stringContaining("every branch of the parallel group 'parallel 1' failed"),
    });
  });
});

describe('Method: parallel(...).run (embedded)', () => {
  it('isolates a failing branch: { results, fulfilled, rejected }', async () => {
    const group = parallel([
      echo('ok'),
      {
        agent: echo('bad'),
        transform: () => {
          throw new Error('bad input');
        },
      },
    ]);
    const r = (await group.run('x')) as {
      results: { status: string; reason?: { error: string; cause: string } }[];
      fulfilled: number;
      rejected: number;
    };
    expect([r.fulfilled, r.rejected]).toEqual([1, 1]);
    expect(r.results[0]).toEqual({ status: 'fulfilled', agent: 'ok', value: '[offline:echo] x' });
    expect(r.results[1]).toMatchObject({
      status: 'rejected',
      agent: 'bad',
      reason: { error: 'NodeError', cause: "node 'bad' threw Error: bad input" },
    });
  });
});

describe('Method: stateGraph(...).run (embedded)', () => {
  interface S {
    n: number;
    note?: string;
  }
  const graph = () =>
    stateGraph<S>()
      .addNode('inc', (s) => ({ n: s.n + 1 }))
      .addNode(
        'write',
        agentNode(
          echo('writer'),
          (s) => `n is ${s.n}`,
          (_s, out) => ({ note: String(out) }),
        ),
      )
      .addEdge('inc', (s) => (s.n >= 3 ? 'write' : 'inc'))
      .addEdge('write', END);

  it('routes until END with the functions of this process: terminatedBy "end"', async () => {
    const r = await graph().run('inc', { n: 0 });
    expect(r).toMatchObject({ state: { n: 3, note: '[offline:echo] n is 3' }, iterations: 4, terminatedBy: 'end' });
  });

  it('stops at maxIterations given to run', async () => {
    const r = await graph().run('inc', { n: -100 }, { maxIterations: 3 });
    expect(r).toMatchObject({ state: { n: -97 }, iterations: 3, terminatedBy: 'maxIterations' });
  });

  it('rejects with UnknownNode naming the node its router returned an unknown name after', async () => {
    const g = stateGraph<S>()
      .addNode('inc', (s) => ({ n: s.n + 1 }))
      .addEdge('inc', () => 'nowhere');
    await expect(g.run('inc', { n: 0 })).rejects.toMatchObject({
      name: 'UnknownNode',
      message: expect.stringContaining('node \'inc\': its router returned "nowhere"'),
    });
  });
});

/** A program run by plain node, importing the built package entry as a user's program imports "stepforge". */
describe.skipIf(!existsSync(join(REPO, 'packages', 'cli', 'dist', 'code.js')))('Program: node program.mjs (built entry)', () => {
  it('prints the result of .run() and exits by itself', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-sdk-run-'));
    writeFileSync(
      join(dir, 'program.mjs'),
      `import { agent, workflow } from ${JSON.stringify(join(REPO, 'packages', 'cli', 'dist', 'code.js'))};
const flow = workflow([agent({ name: 'only', model: 'local:echo' })]);
const result = await flow.run('from a program');
console.log(JSON.stringify(result));
`,
    );
    const r = spawnSync(process.execPath, ['program.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toEqual({
      output: '[offline:echo] from a program',
      steps: [{ agent: 'only', output: '[offline:echo] from a program' }],
      stoppedEarly: false,
    });
  }, 60_000);
});

/**
 * `.run(input, {idempotencyKey})` from a program run three times: the first run fails at its second
 * step, the second (same key) retries it reusing the first step's committed result, the third
 * answers the retry's result without running anything. Counts of the functions' calls are kept in
 * files, since each run of the program is a new process.
 */
describe.skipIf(!existsSync(join(REPO, 'packages', 'cli', 'dist', 'code.js')))(
  'Program: .run(input, {idempotencyKey}) across runs of the program',
  () => {
    it('retries the run the key names, reusing its committed node results, and then answers its result', () => {
      const dir = mkdtempSync(join(tmpdir(), 'sf-sdk-key-'));
      try {
        writeFileSync(
          join(dir, 'program.mjs'),
          `import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { agent, workflow } from ${JSON.stringify(join(REPO, 'packages', 'cli', 'dist', 'code.js'))};
const count = (name) => appendFileSync(name, 'x');
const flow = workflow([
  { agent: agent({ name: 'first', model: 'local:echo' }), transform: (p) => { count('first.calls'); return p; } },
  { agent: agent({ name: 'second', model: 'local:echo' }), transform: (p) => { count('second.calls'); if (!existsSync('fixed')) throw new Error('not yet'); return p; } },
]);
try {
  console.log(JSON.stringify(await flow.run('hello', { idempotencyKey: 'order-42' })));
} catch (e) {
  console.log(JSON.stringify({ error: e.name, message: e.message }));
}
`,
        );
        const program = () => {
          const r = spawnSync(process.execPath, ['program.mjs'], {
            cwd: dir,
            encoding: 'utf8',
            timeout: 60_000,
            env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
          });
          expect([r.status, r.stderr]).toEqual([0, '']);
          return JSON.parse(r.stdout) as Record<string, unknown>;
        };
        const calls = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').length : 0);
        expect(program()).toMatchObject({ error: 'NodeError', message: expect.stringContaining('not yet') });
        expect([calls('first.calls'), calls('second.calls')]).toEqual([1, 1]);
        writeFileSync(join(dir, 'fixed'), '');
        const expected = {
          output: '[offline:echo] [offline:echo] hello',
          steps: [
            { agent: 'first', output: '[offline:echo] hello' },
            { agent: 'second', output: '[offline:echo] [offline:echo] hello' },
          ],
          stoppedEarly: false,
        };
        expect(program()).toEqual(expected);
        // The first step's transform was not called again: its committed result was reused.
        expect([calls('first.calls'), calls('second.calls')]).toEqual([1, 2]);
        expect(program()).toEqual(expected);
        expect([calls('first.calls'), calls('second.calls')]).toEqual([1, 2]);
        // The runs are the project's: the CLI lists the key's run and its retry.
        const list = spawnSync(process.execPath, [join(REPO, 'packages', 'cli', 'bin', 'stepforge.js'), 'runs', 'list', '--json'], {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
        });
        const runs = (JSON.parse(list.stdout) as { runs: { status: string }[] }).runs;
        expect(runs.map((r) => r.status).sort()).toEqual(['FAILED', 'SUCCEEDED']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  },
);

describe('Method: stateGraph(...).run (errors before the run)', () => {
  it('rejects with invalid_workflow when the graph is malformed', async () => {
    const g = stateGraph()
      .addNode('a', () => ({}))
      .addEdge('a', 'b');
    await expect(g.run('a', {})).rejects.toMatchObject({
      name: 'invalid_workflow',
      message: "export 'stateGraph': edges.a: edge to unknown node 'b'",
    });
  });
});
