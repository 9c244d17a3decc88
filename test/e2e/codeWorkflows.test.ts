import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo, STEPFORGE_BIN } from './support/testIo.js';

const repo = join(__dirname, '..', '..');

describe('Function: compileCodeModule (stepforge compile FILE.ts)', () => {
  it('compiles the exported Kortyx workflow with states named after its nodes', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sf-code-'));
    const io = bufferIo(repo);
    const code = await main(['compile', 'examples/code/support.ts', '-o', out, '--json'], io);
    expect(io.stderr()).toBe('');
    expect(code).toBe(0);
    const asl = JSON.parse(readFileSync(join(out, 'support.asl.json'), 'utf8')) as { States: Record<string, { Type: string }> };
    expect(
      Object.entries(asl.States)
        .filter(([, s]) => s.Type === 'Task')
        .map(([n]) => n)
        .sort(),
    ).toEqual(['answer', 'classify', 'refund']);
  });

  it('reports a module that fails to load as module_load_failed at the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-'));
    writeFileSync(join(dir, 'broken.mjs'), 'throw new Error("no database configured");\n');
    const io = bufferIo(dir);
    const code = await main(['compile', 'broken.mjs', '--json'], io);
    expect(code).toBe(1);
    const err = JSON.parse(io.stdout()).error;
    expect(err.class).toBe('module_load_failed');
    expect(err.message).toContain('cannot load the module broken.mjs: no database configured');
  });

  it('asks for --export when a module exports several workflows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-'));
    writeFileSync(
      join(dir, 'two.mjs'),
      `import { defineWorkflow } from ${JSON.stringify(join(repo, 'packages/compiler/dist/index.js'))};
const w = (id) => defineWorkflow({ id, version: '1', nodes: { a: { run: () => ({}) } }, edges: [['__start__', 'a'], ['a', '__end__']] });
export const first = w('first');
export const second = w('second');
`,
    );
    const io = bufferIo(dir);
    expect(await main(['compile', 'two.mjs', '--json'], io)).toBe(1);
    expect(JSON.parse(io.stdout()).error.message).toBe('two.mjs exports several workflows (first, second): name one with --export NAME');
    const io2 = bufferIo(dir);
    expect(await main(['compile', 'two.mjs', '--export', 'second', '-o', dir, '--json'], io2)).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'second.manifest.json'), 'utf8')).format).toBe('code');
  });
});

describe('Command: run FILE.ts', () => {
  it('runs the Kortyx support flow embedded: the node functions run in the function handler', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-run-'));
    const io = bufferIo(dir);
    const code = await main(['run', join(repo, 'examples/code/support.ts'), '--input', '{"message":"I want a refund"}', '--json'], io);
    const result = JSON.parse(io.stdout()) as { status: string; output: unknown };
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ message: 'I want a refund', topic: 'refund', reply: 'Your refund has been started.' });
    expect(code).toBe(0);
    const io2 = bufferIo(dir);
    await main(['run', join(repo, 'examples/code/support.ts'), '--input', '{"message":"how do I log in?"}', '--json'], io2);
    expect((JSON.parse(io2.stdout()) as { output: unknown }).output).toEqual({
      message: 'how do I log in?',
      topic: 'question',
      reply: 'Thanks for your question. — the support team',
    });
  });
});

/** The built binary on plain Node 20 (no .ts loader): the module is bundled before it is imported. */
describe.skipIf(!existsSync(join(repo, 'packages', 'cli', 'dist', 'bundle', 'stepforge.cjs')))(
  'Binary: stepforge compile|validate|graph FILE.ts (built, plain node)',
  () => {
    const sf = (cwd: string, ...argv: string[]) => {
      const r = spawnSync(process.execPath, [STEPFORGE_BIN, ...argv], {
        cwd,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
      });
      return { code: r.status, out: r.stdout, err: r.stderr };
    };

    it('compiles a TypeScript module into a bundle under .stepforge/code that the nodes name', () => {
      const dir = mkdtempSync(join(tmpdir(), 'sf-code-bin-'));
      const r = sf(dir, 'compile', join(repo, 'examples/code/support.ts'), '-o', dir, '--json');
      expect([r.code, r.err]).toEqual([0, '']);
      const asl = readFileSync(join(dir, 'support.asl.json'), 'utf8');
      const bundles = readdirSync(join(dir, '.stepforge', 'code'));
      expect(bundles).toEqual([expect.stringMatching(/^support-[0-9a-f]{16}\.mjs$/)]);
      expect(asl).toContain(JSON.stringify(join(dir, '.stepforge', 'code', bundles[0]!)));
    }, 60_000);

    it('validates and draws a module, and names the line of a syntax error', () => {
      const dir = mkdtempSync(join(tmpdir(), 'sf-code-bin-'));
      expect(sf(repo, 'validate', 'examples/code/support.ts')).toMatchObject({ code: 0, out: 'ok\n' });
      const g = sf(repo, 'graph', 'examples/code/support.ts', '--json');
      expect(JSON.parse(g.out)).toEqual({
        nodes: [
          { handle: 'classify', kind: 'node', tools: [] },
          { handle: 'answer', kind: 'node', tools: [] },
          { handle: 'refund', kind: 'node', tools: [] },
        ],
        edges: [
          [0, 1],
          [0, 2],
        ],
      });
      writeFileSync(join(dir, 'bad.ts'), 'export const x = 1;\nexport const y = ;\n');
      const bad = sf(dir, 'validate', 'bad.ts', '--json');
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.out).error).toMatchObject({ class: 'module_load_failed', line: 2, column: 18 });
    }, 60_000);
  },
);

describe('Command: run FILE.ts (agent SDK examples, offline provider)', () => {
  it('runs the clinical pipeline: { output, steps, stoppedEarly }, the specialists joined line by line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-sdk-'));
    const io = bufferIo(dir);
    const code = await main(
      [
        'run',
        join(repo, 'examples/code/clinical.ts'),
        '--input',
        '{"input":"Chest pain since this morning; takes warfarin."}',
        '--provider',
        'local',
        '--json',
      ],
      io,
    );
    const result = JSON.parse(io.stdout()) as {
      status: string;
      output: { output: string; steps: { agent?: string; parallel?: string; results?: { status: string }[] }[]; stoppedEarly: boolean };
    };
    expect([code, result.status]).toEqual([0, 'SUCCEEDED']);
    expect(result.output.steps.map((s) => s.agent ?? s.parallel)).toEqual(['intake', 'urgent care', 'parallel 3', 'care plan']);
    expect(result.output.steps[2]!.results!.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(result.output.output.split('\n')).toHaveLength(4);
    expect(result.output.stoppedEarly).toBe(false);
  }, 60_000);

  it('runs the triage graph through its reviewer loop to END', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-sdk-'));
    const io = bufferIo(dir);
    const code = await main(
      ['run', join(repo, 'examples/code/triage.ts'), '--input', '{"complaint":"chest pain on stairs"}', '--provider', 'local', '--json'],
      io,
    );
    const result = JSON.parse(io.stdout()) as {
      status: string;
      output: { state: Record<string, unknown>; steps: { node: string }[]; iterations: number; terminatedBy: string };
    };
    expect(code).toBe(0);
    expect(result.output).toMatchObject({ state: { category: 'urgent', reviews: 2, approved: true }, iterations: 5, terminatedBy: 'end' });
    expect(result.output.steps.map((s) => s.node)).toEqual(['classify', 'draft', 'review', 'draft', 'review']);
  }, 60_000);

  it('retried, reuses the committed results of the nodes that finished', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-code-sdk-'));
    const counted = join(dir, 'counted.txt');
    const flag = join(dir, 'failed-once');
    writeFileSync(
      join(dir, 'flaky.mjs'),
      `import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { END, stateGraph } from ${JSON.stringify(join(repo, 'packages/compiler/dist/index.js'))};
export const flaky = stateGraph()
  .addNode('count', (s) => { appendFileSync(${JSON.stringify(counted)}, 'ran\\n'); return { n: s.n + 1 }; })
  .addNode('check', () => { if (!existsSync(${JSON.stringify(flag)})) { writeFileSync(${JSON.stringify(flag)}, ''); throw new Error('not yet'); } return { ok: true }; })
  .addEdge('count', 'check')
  .addEdge('check', END);
`,
    );
    const io = bufferIo(dir);
    expect(await main(['run', 'flaky.mjs', '--input', '{"n":1}', '--json'], io)).toBe(1);
    const first = JSON.parse(io.stdout()) as { runId: string; status: string };
    expect(first.status).toBe('FAILED');
    const io2 = bufferIo(dir);
    expect(await main(['runs', 'retry', first.runId, '--json'], io2)).toBe(0);
    expect(JSON.parse(io2.stdout())).toMatchObject({
      status: 'SUCCEEDED',
      output: { state: { n: 2, ok: true }, iterations: 2, terminatedBy: 'end' },
    });
    expect(readFileSync(counted, 'utf8')).toBe('ran\n');
  }, 90_000);
});
