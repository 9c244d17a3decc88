import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPUS_DIR, corpusDir, corpusMissingReason, REPO_ROOT } from './corpusDir.js';
import { CORPUS_DIR as RUN_CASE_DIR } from './runCase.js';

/** The repository root found the slow way: the nearest folder above the working directory whose package.json declares workspaces. */
function findRepoRoot(from: string): string {
  for (let d = from; ; d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { workspaces?: unknown }).workspaces) return d;
    if (dirname(d) === d) throw new Error(`no workspace root above ${from}`);
  }
}

describe('Function: corpusDir', () => {
  it('is ../shared/conformance beside the repository root, wherever the repository is checked out', () => {
    const root = findRepoRoot(process.cwd());
    expect(REPO_ROOT).toBe(root);
    expect(corpusDir({})).toBe(join(root, '..', 'shared', 'conformance'));
    // Every harness file reads the same place.
    if (!process.env.STEPFORGE_CONFORMANCE_DIR) expect(RUN_CASE_DIR).toBe(join(root, '..', 'shared', 'conformance'));
    expect(RUN_CASE_DIR).toBe(CORPUS_DIR);
  });

  it('takes STEPFORGE_CONFORMANCE_DIR when it is set', () => {
    expect(corpusDir({ STEPFORGE_CONFORMANCE_DIR: '/elsewhere/corpus' })).toBe('/elsewhere/corpus');
  });
});

describe('Function: corpusMissingReason', () => {
  it('says where it looked and how to fix it when the corpus is absent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'no-corpus-'));
    try {
      const reason = corpusMissingReason(dir);
      expect(reason).toBe(
        `conformance corpus not found at ${join(dir, 'cases')}: check out the shared folder next to the repository (../shared/conformance) or set STEPFORGE_CONFORMANCE_DIR`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is undefined when the corpus is there', () => {
    expect(corpusMissingReason(join(REPO_ROOT, 'packages', 'engine', 'test'), 'conformance')).toBeUndefined();
  });
});

describe('Suite: conformance tests without the corpus', () => {
  it('report the corpus as missing in the test output, as a skipped test with the reason', () => {
    const missing = join(tmpdir(), 'stepforge-no-such-corpus');
    const r = spawnSync(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        'packages/engine/test/conformance/conformance.test.ts',
        'packages/engine/test/resources/ServiceConformance.test.ts',
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, STEPFORGE_CONFORMANCE_DIR: missing, CI: 'true', NO_COLOR: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toContain(`[conformance] SKIPPED: conformance corpus not found at ${join(missing, 'cases')}`);
    expect(out).toContain(`[conformance] SKIPPED: conformance corpus not found at ${join(missing, 'cases', 'services')}`);
    expect(out).toMatch(/2 skipped/);
    expect(out).not.toMatch(/\d+ passed/);
  }, 150_000);
});
