import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import type { CliIo } from '../src/CliIo.js';

const dir = mkdtempSync(join(tmpdir(), 'stepforge-runs-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `stepforge ARGV` in `dir`: exit code, stdout, stderr. */
async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    isTTY: false,
    cwd: dir,
    env: {},
  };
  const code = await main(argv, io);
  return { code, out, err };
}

/** Asserts a usage error (exit 2) with this first line, in text and in --json, and that no stack was opened. */
async function expectUsage(argv: string[], message: string) {
  const text = await run(...argv);
  expect({ argv, code: text.code, out: text.out, err: text.err.split('\n')[0] }).toEqual({
    argv,
    code: 2,
    out: '',
    err: `error[usage] ${message}`,
  });
  const json = await run(...argv, '--json');
  expect({ argv, code: json.code, error: JSON.parse(json.out).error }).toEqual({
    argv,
    code: 2,
    error: { class: 'usage', message, line: null, column: null },
  });
  expect(existsSync(join(dir, '.stepforge'))).toBe(false);
}

describe('Command: runs (usage errors, checked before the stack opens)', () => {
  describe('cancel --reason', () => {
    it("refuses an empty or blank reason, which would be recorded as the run's error message", async () => {
      const message = "--reason cannot be empty: say why the run is cancelled, or leave --reason out to record 'cancelled by the user'";
      await expectUsage(['runs', 'cancel', 'run-1', '--reason', ''], message);
      await expectUsage(['runs', 'cancel', 'run-1', '--reason=   '], message);
      await expectUsage(['runs', 'cancel', 'run-1', '--reason', '\t\n'], message);
    });

    it('refuses a reason longer than POST /runs/{id}/cancel takes', async () => {
      await expectUsage(['runs', 'cancel', 'run-1', '--reason', 'r'.repeat(2001)], '--reason is at most 2000 characters, got 2001');
    });
  });

  describe('flags of another subcommand', () => {
    it('refuses retry --from, pointing to restart', async () => {
      await expectUsage(
        ['runs', 'retry', 'run-1', '--from', 'draft'],
        '--from goes with runs restart: runs retry re-runs only the steps that did not finish; to re-run from a step, use runs restart run-1 --from draft',
      );
    });

    it('refuses every flag outside its subcommand rather than ignoring it', async () => {
      await expectUsage(['runs', 'show', 'run-1', '--from', 'draft'], '--from goes with runs restart');
      await expectUsage(['runs', 'list', '--from', 'draft'], '--from goes with runs restart');
      await expectUsage(['runs', 'show', 'run-1', '--workflow', 'quickstart'], '--workflow goes with runs list');
      await expectUsage(['runs', 'cancel', 'run-1', '--status', 'FAILED'], '--status goes with runs list');
      await expectUsage(['runs', 'restart', 'run-1', '--from', 'draft', '--reason', 'x'], '--reason goes with runs cancel');
      await expectUsage(['runs', 'retry', 'run-1', '--limit', '3'], '--limit goes with runs list');
    });
  });

  describe('positionals', () => {
    it('refuses stray arguments on every subcommand', async () => {
      await expectUsage(['runs', 'list', 'extra'], "runs list takes no arguments (got 'extra')");
      await expectUsage(['runs', 'list', 'a', 'b'], "runs list takes no arguments (got 'a', 'b')");
      for (const sub of ['show', 'retry', 'cancel'])
        await expectUsage(['runs', sub, 'run-1', 'extra'], `runs ${sub} takes one run ID (got 2: 'run-1', 'extra')`);
      await expectUsage(
        ['runs', 'restart', 'run-1', 'draft', '--from', 'draft'],
        "runs restart takes one run ID (got 2: 'run-1', 'draft')",
      );
      for (const sub of ['show', 'retry', 'restart', 'cancel']) await expectUsage(['runs', sub], `runs ${sub} takes one run ID`);
    });
  });

  describe('list --limit', () => {
    it('takes only plain decimal digits from 1 to 10000', async () => {
      for (const bad of ['0x10', '1e2', ' 2', '2 ', '+5', '1.5', '1_000', '０1', '0', '10001']) {
        await expectUsage(['runs', 'list', '--limit', bad], `--limit must be a whole number from 1 to 10000, got '${bad}'`);
      }
    });

    it('names the range for a negative number given as its own argument, as for --limit=-1', async () => {
      await expectUsage(['runs', 'list', '--limit', '-1'], "--limit must be a whole number from 1 to 10000, got '-1'");
      await expectUsage(['runs', 'list', '--limit=-1'], "--limit must be a whole number from 1 to 10000, got '-1'");
      await expectUsage(['runs', 'list', '--workflow', 'w', '--limit', '-20'], "--limit must be a whole number from 1 to 10000, got '-20'");
      await expectUsage(['runs', 'show', 'run-1', '--limit', '-1'], '--limit goes with runs list');
      // A value that starts with a dash and is not a number is still parseArgs' question.
      const flag = await run('runs', 'list', '--limit', '--workflow', 'w');
      expect([flag.code, flag.err.split('\n')[0]]).toEqual([2, "error[usage] Option '--limit' argument is ambiguous."]);
      // After `--`, everything is a positional.
      const after = await run('runs', 'list', '--', '--limit', '-1');
      expect([after.code, after.err]).toEqual([2, "error[usage] runs list takes no arguments (got '--limit', '-1')\n"]);
    });
  });
});

describe('Command: approvals (usage errors, checked before the stack opens)', () => {
  it("refuses a stray argument and another subcommand's flag rather than ignore them", async () => {
    await expectUsage(['approvals', 'list', 'extra'], "approvals list takes no arguments (got 'extra')");
    await expectUsage(['approvals', 'list', '--comment', 'x'], '--comment goes with approvals approve or reject');
    await expectUsage(['approvals', 'approve', 'a-1', '--status', 'PENDING'], '--status goes with approvals list');
  });
});
