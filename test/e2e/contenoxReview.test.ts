// The Contenox review chain as its users run it (`git diff | contenox run --chain ./review.json`),
// through the real CLI in its own process: the diff on standard input is the chain's input.
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STEPFORGE_BIN, tempProject } from './support/testIo.js';

const DIFF = 'diff --git a/x.go b/x.go\n+func add(a, b int) int { return a - b }\n';

function stepforge(cwd: string, argv: readonly string[], stdin = '', env: Record<string, string> = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [STEPFORGE_BIN, ...argv], { cwd, input: stdin, encoding: 'utf8', timeout: 90_000, env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('Command: run (a Contenox task chain)', () => {
  const project = tempProject('sf-contenox-');
  afterAll(() => project.remove());
  copyFileSync(join(__dirname, 'fixtures/contenox/review.json'), join(project.dir, 'review.json'));
  writeFileSync(join(project.dir, 'policy.json'), '[]');
  const vars = ['--var', 'model=any-model-id', '--var', 'provider=local'];

  it('runs the review chain with a diff piped on standard input, as Contenox users type it', () => {
    for (const argv of [['run', 'review.json'], ['run', '--chain', 'review.json'], ['run', 'review.json', '--input', '-']]) {
      const r = stepforge(project.dir, [...argv, ...vars, '--json'], DIFF);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
      // The offline provider echoes its prompt: the diff reached the review task as its input.
      expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: `[offline:echo] ${DIFF}` });
    }
  }, 200_000);

  it('fills macros from the environment too', () => {
    const r = stepforge(project.dir, ['run', 'review.json', '--json'], DIFF, { model: 'm', provider: 'local' });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED' });
  }, 120_000);

  it('refuses an unfilled macro before the run, located in the chain', () => {
    const r = stepforge(project.dir, ['run', 'review.json', '--json'], DIFF);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'unfilled_macro', file: 'review.json', line: 10, column: 19 });
    const bad = stepforge(project.dir, ['run', 'review.json', '--var', 'model'], DIFF);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--var takes NAME=VALUE, got 'model'");
  }, 120_000);
});
