import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliIn, tempProject } from './support/testIo.js';

const WORKFLOW =
  'chain: "plan@web-search > write"\ntasks:\n  plan:\n    kind: model\n    prompt: "plan"\n  write:\n    kind: model\n    prompt: "write ${steps.plan.output}"\n';

/** Every store file's bytes (LevelDB's info logs and lock aside), to show nothing was changed. */
const contents = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f !== 'LOCK' && !f.startsWith('LOG'))
      .sort()
      .map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
  );
/** Every file under `dir`, by relative path, with its bytes. */
const treeContents = (dir: string) =>
  Object.fromEntries(
    (readdirSync(dir, { recursive: true }) as string[])
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
  );

describe('Function: openStack', () => {
  describe('Method: a read-only command on a damaged store', () => {
    const project = tempProject();
    const cli = cliIn(project.dir);
    const store = join(project.dir, '.stepforge', 'dynamodb');
    const runIds: string[] = [];
    beforeAll(async () => {
      writeFileSync(join(project.dir, 'wf.chain.yaml'), WORKFLOW);
      for (let i = 0; i < 3; i++) {
        const r = await cli('run', 'wf.chain.yaml', '--json');
        expect(r.code, r.err).toBe(0);
        runIds.push((JSON.parse(r.out) as { runId: string }).runId);
      }
      // A second open moves LevelDB's log into table files, as a store used for a while has them.
      expect((await cli('runs', 'list', '--json')).code).toBe(0);
      expect(readdirSync(store).some((f) => f.endsWith('.ldb'))).toBe(true);
    }, 120_000);
    afterAll(() => project.remove());

    it('is store_damaged for a table file cut short, before LevelDB opens (and rewrites) the store', async () => {
      const table = readdirSync(store)
        .filter((f) => f.endsWith('.ldb'))
        .sort()[0]!;
      const whole = readFileSync(join(store, table));
      writeFileSync(join(store, table), whole.subarray(0, Math.floor(whole.length / 2)));
      try {
        const before = contents(store);
        const r = await cli('runs', 'list');
        expect([r.code, r.out]).toEqual([1, '']);
        expect(r.err).toContain(`cannot be opened: table file ${table} is cut short or overwritten (no LevelDB table footer)`);
        // Before: LevelDB opened it, moved its log into a new table and wrote a new manifest.
        expect(contents(store)).toEqual(before);
      } finally {
        writeFileSync(join(store, table), whole);
      }
    });

    it('leaves every file of a healthy store and of the engine as it was (runs list, runs show, approvals list)', async () => {
      const engine = join(project.dir, '.stepforge', 'engine');
      const before = [contents(store), treeContents(engine)];
      for (const argv of [
        ['runs', 'list', '--json'],
        ['runs', 'show', runIds[0]!, '--json'],
        ['approvals', 'list', '--json'],
      ]) {
        const r = await cli(...argv);
        expect([argv.join(' '), r.code, r.err]).toEqual([argv.join(' '), 0, '']);
      }
      // Before: each opened LevelDB read-write, which moved its log into a new table, wrote a new
      // MANIFEST, and wrote the stack's lease epoch and identity.
      expect([contents(store), treeContents(engine)]).toEqual(before);
    });

    it('takes a table file the MANIFEST does not list (a flush cut off by a crash) for the orphan it is', async () => {
      const table = readdirSync(store)
        .filter((f) => f.endsWith('.ldb'))
        .sort()[0]!;
      const whole = readFileSync(join(store, table));
      const orphan = join(store, '999990.ldb');
      writeFileSync(orphan, whole.subarray(0, Math.floor(whole.length / 2)));
      try {
        const r = await cli('runs', 'list', '--json');
        // Before: store_damaged, "table file 999990.ldb is cut short or overwritten", for a store LevelDB opens.
        expect([r.code, r.err]).toEqual([0, '']);
        expect((JSON.parse(r.out) as { runs: { runId: string }[] }).runs.map((x) => x.runId).sort()).toEqual([...runIds].sort());
      } finally {
        rmSync(orphan, { force: true });
      }
    });

    it('is store_damaged for an overwritten record of the log, which LevelDB would skip (losing the writes in it)', async () => {
      const log = readdirSync(store)
        .filter((f) => f.endsWith('.log'))
        .sort()
        .at(-1)!;
      const whole = readFileSync(join(store, log));
      expect(whole.length).toBeGreaterThan(40);
      const bad = Buffer.from(whole);
      bad.write('garbage', 20, 'latin1');
      writeFileSync(join(store, log), bad);
      try {
        const before = contents(store);
        const r = await cli('runs', 'list');
        expect([r.code, r.out]).toEqual([1, '']);
        expect(r.err).toMatch(
          new RegExp(
            `^error\\[store_damaged\\] the run store in .* cannot be opened: log file ${log} has a record whose checksum fails at offset 0 \\(overwritten\\)`,
          ),
        );
        expect(contents(store)).toEqual(before);
      } finally {
        writeFileSync(join(store, log), whole);
      }
    });

    it('is store_damaged for a missing CURRENT, with a hint that keeps the data, and deletes nothing', async () => {
      rmSync(join(store, 'CURRENT'));
      const before = contents(store);
      for (const argv of [
        ['runs', 'list'],
        ['runs', 'show', runIds[0]!],
        ['approvals', 'list'],
        ['run', 'wf.chain.yaml'],
      ]) {
        const r = await cli(...argv);
        expect([argv.join(' '), r.code, r.out]).toEqual([argv.join(' '), 1, '']);
        expect(r.err).toMatch(
          new RegExp(
            `^error\\[store_damaged\\] the run store in ${store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be opened: its CURRENT file is missing, while store files are there \\(`,
          ),
        );
        expect(r.err).toContain('help: no store file was deleted to get past the damage');
        expect(r.err).not.toMatch(/move (that|the) directory aside|delete (it|that|the)|start with an empty store|rm -rf/);
        // Before: `runs list` printed "no runs", exit 0, made an empty store and deleted the table files.
        expect(contents(store)).toEqual(before);
      }
    });

    it('is brought back by store repair, which keeps a copy as it was, and every run is there again', async () => {
      const before = contents(store);
      const r = await cli('store', 'repair', '--json');
      expect(r.code, r.err).toBe(0);
      const { copy, state } = JSON.parse(r.out) as { copy: string; state: string };
      expect(state).toBe('damaged');
      expect(contents(copy)).toEqual(before);
      const list = await cli('runs', 'list', '--json');
      expect([list.code, list.out.slice(0, 400)]).toEqual([0, expect.stringContaining('"runs"')]);
      const listed = JSON.parse(list.out) as { runs: { runId: string; status: string }[] };
      expect(listed.runs.map((x) => x.runId).sort()).toEqual([...runIds].sort());
      expect(listed.runs.every((x) => x.status === 'SUCCEEDED')).toBe(true);
    });
  });

  describe('Method: a read-only command on a project with no store', () => {
    const project = tempProject();
    const cli = cliIn(project.dir);
    afterAll(() => project.remove());

    it('answers "no runs" and creates no store', async () => {
      expect(await cli('runs', 'list', '--json')).toMatchObject({ code: 0, out: '{"runs":[]}\n' });
      expect((await cli('approvals', 'list', '--json')).code).toBe(0);
      expect((await cli('runs', 'show', 'nope')).err).toMatch(/^error\[unknown_run\] no run with id 'nope'/);
      expect(existsSync(join(project.dir, '.stepforge', 'dynamodb'))).toBe(false);
    });
  });
});
