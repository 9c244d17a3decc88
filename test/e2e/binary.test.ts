import { describe, it, expect, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, STEPFORGE_BIN, example, spawnStepforge, tempProject } from './support/testIo.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));

/** The built `stepforge` binary in a fresh project: history on disk survives from one process to the next. */
describe.skipIf(!built)('Binary: stepforge run / runs (spawned, built dist/)', () => {
  const project = tempProject();
  afterAll(() => project.remove());
  const stepforge = (...argv: string[]) => spawnStepforge(project.dir, { ...process.env, STEPFORGE_LOG_LEVEL: undefined }, argv);

  it('runs the quickstart, then finds the run from a second process', async () => {
    const first = await stepforge('run', example('quickstart.chain.yaml'), '--input', '{"topic":"tide pools"}', '--json');
    expect(first.code).toBe(0);
    // stdout carries exactly the JSON line (handler logs stay off stdout).
    const result = JSON.parse(first.stdout);
    expect(Object.keys(result)).toEqual(['runId', 'status', 'output', 'reused']);
    expect(result.status).toBe('SUCCEEDED');
    expect(existsSync(join(project.dir, '.stepforge', 'dynamodb'))).toBe(true);
    expect(existsSync(join(project.dir, '.stepforge', 'stack.json'))).toBe(false);

    const listed = await stepforge('runs', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).runs).toEqual([
      expect.objectContaining({ runId: result.runId, workflow: 'quickstart', status: 'SUCCEEDED' }),
    ]);
  }, 180_000);

  it('exits 1 with store_damaged for a damaged store, and leaves it as it was', async () => {
    const store = join(project.dir, '.stepforge', 'dynamodb');
    const current = readFileSync(join(store, 'CURRENT'));
    writeFileSync(join(store, 'CURRENT'), 'MANIFEST-999999\n');
    const files = () =>
      readdirSync(store)
        .filter((f) => !f.startsWith('LOG'))
        .sort();
    const before = files();
    try {
      const r = await stepforge('runs', 'list');
      expect([r.code, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toBe(
        // Found before LevelDB is asked to open it: the MANIFEST that CURRENT names is not there.
        `error[store_damaged] the run store in ${store} cannot be opened: its CURRENT file names MANIFEST-999999, which is missing\n` +
          '  = help: no store file was deleted to get past the damage: the files under .stepforge/dynamodb are kept. Restore that directory from a backup if you have one; otherwise `stepforge store repair` copies it to .stepforge/dynamodb.damaged-<time> and repairs it in place (the copy keeps every file as it was)\n',
      );
      expect(files()).toEqual(before);
    } finally {
      writeFileSync(join(store, 'CURRENT'), current);
    }
    expect((await stepforge('runs', 'list', '--json')).code).toBe(0);
  }, 120_000);

  it('exits 1 with a named error for input that does not match the schema', async () => {
    const bad = await stepforge('run', example('quickstart.chain.yaml'), '--input', '{}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("error[invalid_input] invalid workflow input: missing required field 'topic' (string)");
  }, 120_000);
  it('ends quietly, exit 0, when the reader of its output closes the pipe (as `| head -1` does)', async () => {
    // 180 KB of DOT, of which `head` reads 10 bytes and closes the pipe: the rest cannot be written.
    const expr = Array.from({ length: 3000 }, (_, i) => `s${i}`).join(' > ');
    const script = `"$NODE" "$BIN" graph --expr "$EXPR" --format dot 2>"$ERR" | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`;
    const err = join(project.dir, 'graph.err');
    const r = await promisify(execFile)('bash', ['-c', script], {
      cwd: project.dir,
      env: { ...process.env, NODE: process.execPath, BIN: STEPFORGE_BIN, EXPR: expr, ERR: err },
    });
    expect([r.stdout, readFileSync(err, 'utf8')]).toEqual(['0\n', '']);
  }, 60_000);
  it('shows a failed step once: the display tells it, stderr carries no log line of it', async () => {
    mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
    writeFileSync(join(project.dir, 'functions', 'user', 'boom.mjs'), "export default async function () { throw new Error('no luck'); }\n");
    writeFileSync(
      join(project.dir, 'boom.yaml'),
      'document: {dsl: "1.0", name: boom, version: "1"}\nfunctions: {boom: {}}\nsteps:\n  go: {call: function, function: boom}\n',
    );
    const r = await stepforge('run', 'boom.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("error: FunctionError: step 'go' failed: function boom threw Error: no luck");
    expect(r.stderr).toBe('');
  }, 180_000);
});
