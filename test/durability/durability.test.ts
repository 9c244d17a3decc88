import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, STEPFORGE_BIN } from '../e2e/support/testIo.js';
import { mulberry32 } from '../support/mulberry32.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));
const LONG = process.env.STEPFORGE_LONG === '1';
/** Kills at least this many processes (CLI and serve), in rounds of ROUND running at once. */
const KILLS = LONG ? 150 : 50;
const ROUND = 2;
const SEED = Number(process.env.STEPFORGE_DURABILITY_SEED ?? 28);
const WORKFLOW =
  'chain: "plan@web-search > [draft & critique] > judge"\ninput:\n  n: number\ntasks:\n  plan:\n    kind: model\n    prompt: "plan ${input.n}"\n  draft:\n    kind: model\n    prompt: "draft ${steps.plan.output}"\n  critique:\n    kind: model\n    prompt: "critique ${steps.plan.output}"\n  judge:\n    kind: model\n    prompt: "judge ${steps.draft.output} ${steps.critique.output}"\n';

interface Proc {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

const env = { ...process.env, STEPFORGE_LOG_LEVEL: undefined, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

function start(cwd: string, argv: readonly string[], extraEnv: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, [STEPFORGE_BIN, ...argv], { cwd, env: { ...env, ...extraEnv } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** The class of the error a `--json` command answered with (`{"error":{"class":…}}` on stdout). */
function namedError(stdout: string): string | undefined {
  try {
    return (JSON.parse(stdout) as { error?: { class?: string } }).error?.class;
  } catch {
    return undefined;
  }
}
const isInternal = (text: string) => /error\[internal\]|internal error:|"class":"internal"/.test(text);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ListedRun {
  runId: string;
  status: string;
  idempotencyKey?: string | null;
}

/**
 * Kills the CLI and `serve` at random points (seeded), including inside the window between a run's
 * record and its execution, then uses every idempotency key again and corrupts each store file:
 * no run is lost or left RUNNING, no command answers error[internal], and every key runs its run.
 */
describe.skipIf(!built)('Durability: kills and corrupted stores (spawned, built dist/)', () => {
  const project = mkdtempSync(join(tmpdir(), 'sf-durable-'));
  const scratch: string[] = [];
  afterAll(() => {
    for (const d of [project, ...scratch]) rmSync(d, { recursive: true, force: true });
  });
  writeFileSync(join(project, 'wf.chain.yaml'), WORKFLOW);
  const random = mulberry32(SEED);
  const keys = new Map<string, number>();
  /** Run ids by key, as any process said them (its JSON answer, or the crash point's line). */
  const runIdOf = new Map<string, string>();
  const seenRunIds = new Set<string>();
  const internal: string[] = [];
  let kills = 0;
  let cliKills = 0;
  let serveKills = 0;
  let windowKills = 0;

  const note = (key: string, r: { stdout: string; stderr: string }) => {
    if (isInternal(r.stdout) || isInternal(r.stderr)) internal.push(`${key}: ${r.stderr}${r.stdout}`);
    const crash = /crash point after-run-record \(run ([0-9a-f-]{36})\)/.exec(r.stderr);
    const answer = /"runId":"([0-9a-f-]{36})"/.exec(r.stdout);
    const id = crash?.[1] ?? answer?.[1];
    if (id !== undefined) {
      seenRunIds.add(id);
      const known = runIdOf.get(key);
      if (known !== undefined && known !== id) internal.push(`key ${key} named two runs: ${known} and ${id}`);
      runIdOf.set(key, id);
    }
  };

  it(
    `kills the CLI and serve ${KILLS}+ times; every key then runs its one run, none lost or stranded`,
    async () => {
      const started = Date.now();
      for (let round = 0; kills < KILLS; round++) {
        // Every round runs against a `serve` that is killed under it at a random point (seeded),
        // with ROUND commands: so at least a third of the kills are of serve.
        const serve = start(project, ['serve', '--port', '0']);
        const stackJson = join(project, '.stepforge', 'stack.json');
        for (let i = 0; i < 600 && serve.child.exitCode === null && !existsSync(stackJson); i++) await sleep(50);
        const procs: { key: string; p: Proc; killAt?: number }[] = [];
        for (let i = 0; i < ROUND; i++) {
          const n = keys.size;
          const key = `k${n}`;
          keys.set(key, n);
          // Inside the window between the run's record and its execution: the command kills itself there.
          const inWindow = random() < 0.3;
          const p = start(
            project,
            ['run', 'wf.chain.yaml', '--input', JSON.stringify({ n }), '--idempotency-key', key, '--json'],
            inWindow ? { STEPFORGE_TEST_CRASH_AT: 'after-run-record' } : {},
          );
          procs.push({ key, p, ...(inWindow ? {} : { killAt: 100 + Math.floor(random() * 2500) }) });
        }
        const timers = procs.map(({ p, killAt }) => (killAt !== undefined ? setTimeout(() => p.child.kill('SIGKILL'), killAt) : undefined));
        const serveTimer = setTimeout(() => serve.child.kill('SIGKILL'), Math.floor(random() * 3000));
        for (const { key, p } of procs) {
          const r = await p.done;
          note(key, r);
          if (r.signal === 'SIGKILL') {
            kills++;
            cliKills++;
            if (/crash point/.test(r.stderr)) windowKills++;
          }
        }
        for (const t of timers) if (t) clearTimeout(t);
        clearTimeout(serveTimer);
        serve.child.kill('SIGKILL');
        const r = await serve.done;
        if (isInternal(r.stderr)) internal.push(`serve: ${r.stderr}`);
        if (r.signal === 'SIGKILL') {
          kills++;
          serveKills++;
        }
      }

      // Every key again, a few at once: each must run (or answer) its one run, to the end.
      const all = [...keys];
      let reusedSame = 0;
      const secondStarts: string[] = [];
      for (let i = 0; i < all.length; i += 6) {
        const batch = all.slice(i, i + 6).map(([key, n]) => ({
          key,
          p: start(project, ['run', 'wf.chain.yaml', '--input', JSON.stringify({ n }), '--idempotency-key', key, '--json']),
        }));
        for (const { key, p } of batch) {
          let r = await p.done;
          if (r.code !== 0) {
            // Seen under load: a start that meets a run another finder is just failing as
            // RunNotStarted answers that run. The key must still be usable: start it once more,
            // and count it (printed), so the window stays visible until it is closed.
            secondStarts.push(`${key}: ${r.stdout.slice(0, 300)}`);
            r = await start(project, [
              'run',
              'wf.chain.yaml',
              '--input',
              JSON.stringify({ n: keys.get(key) }),
              '--idempotency-key',
              key,
              '--json',
            ]).done;
          }
          const known = runIdOf.get(key);
          note(key, r);
          expect([
            key,
            r.code,
            r.stderr
              .split('\n')
              .filter((l) => l.startsWith('error'))
              .join('\n'),
            r.code === 0 ? '' : r.stdout.slice(0, 2000),
          ]).toEqual([key, 0, '', '']);
          expect(JSON.parse(r.stdout)).toMatchObject({ status: 'SUCCEEDED' });
          if (known !== undefined && JSON.parse(r.stdout).runId === known) reusedSame++;
        }
      }
      const listed = start(project, ['runs', 'list', '--json', '--limit', '10000']);
      const l = await listed.done;
      expect(l.code, l.stderr).toBe(0);
      const runs = (JSON.parse(l.stdout) as { runs: ListedRun[] }).runs;
      const byId = new Map(runs.map((r) => [r.runId, r]));
      const lost = [...seenRunIds].filter((id) => !byId.has(id));
      const stranded = runs.filter((r) => r.status === 'RUNNING');
      const perKey = new Map<string, number>();
      for (const r of runs) if (r.idempotencyKey) perKey.set(r.idempotencyKey, (perKey.get(r.idempotencyKey) ?? 0) + 1);
      const keysUsable = all.filter(([k]) => perKey.get(k) === 1).length;
      process.stdout.write(
        `durability: ${kills} kills (${cliKills} of the CLI, ${serveKills} of serve, ${windowKills} between run record and execution), ${lost.length} runs lost, ${stranded.length} stranded, ${internal.length} internal errors; ${keysUsable}/${all.length} keys usable again (${reusedSame} answered with the run first started, ${secondStarts.length} needed a second start); seed ${SEED}, ${Math.round((Date.now() - started) / 1000)} s\n`,
      );
      for (const s of secondStarts) process.stderr.write(`durability: second start of ${s}\n`);
      expect(internal).toEqual([]);
      expect(lost).toEqual([]);
      expect(stranded).toEqual([]);
      expect(keysUsable).toBe(all.length);
      expect(kills).toBeGreaterThanOrEqual(KILLS);
      expect(serveKills * 3).toBeGreaterThanOrEqual(kills);
    },
    LONG ? 1_800_000 : 600_000,
  );

  it(
    'corrupts each store file (truncated, garbage, deleted): a named error or every run, no file of the project changed, nothing lost',
    async () => {
      const started = Date.now();
      const runsIn = async (dir: string) => {
        const r = await start(dir, ['runs', 'list', '--json', '--limit', '10000']).done;
        return { ...r, runs: r.code === 0 ? (JSON.parse(r.stdout) as { runs?: ListedRun[] }).runs : undefined };
      };
      const base = await runsIn(project);
      expect(base.code, base.stderr).toBe(0);
      const expected = base.runs!.map((r) => r.runId).sort();
      expect(expected.length).toBeGreaterThan(0);
      const data = join(project, '.stepforge');
      // Every file of each kind the store and the engine keep: CURRENT, the MANIFEST, each log and
      // each table; the engine's journal, and one of each of its per-execution, per-machine and
      // per-definition files.
      const db = readdirSync(join(data, 'dynamodb'));
      const engineFiles = (readdirSync(join(data, 'engine'), { recursive: true }) as string[])
        .filter((f) => statSync(join(data, 'engine', f)).isFile())
        .sort();
      const oneOf = (re: RegExp) => engineFiles.filter((f) => re.test(f)).slice(0, 1);
      const files = [
        ...db
          .filter((f) => f === 'CURRENT' || f.startsWith('MANIFEST-') || /^\d+\.(log|ldb|sst)$/.test(f))
          .sort()
          .map((f) => join('dynamodb', f)),
        ...oneOf(/^executions\.ndjson$/),
        ...oneOf(/^histories\//),
        ...oneOf(/^state-machines\//),
        ...oneOf(/^definitions\//),
      ].map((f) => (f.startsWith('dynamodb') ? f : join('engine', f)));
      const kinds = new Set(
        files.map((f) =>
          f.startsWith('dynamodb')
            ? basename(f)
                .replace(/^MANIFEST-.*/, 'MANIFEST')
                .replace(/^\d+\./, '*.')
            : f.replace(/[0-9a-f-]{8,}[^/]*/g, '*'),
        ),
      );
      const modes = ['truncate', 'garbage', 'delete'] as const;
      const outcomes = { named: 0, whole: 0 };
      let corruptions = 0;
      const failures: string[] = [];
      const lost = new Set<string>();
      /** Every file under .stepforge with its bytes: what a command must leave as it was. */
      const tree = (dir: string) =>
        Object.fromEntries(
          (readdirSync(dir, { recursive: true }) as string[])
            .filter((f) => statSync(join(dir, f)).isFile())
            .sort()
            .map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
        );
      const changes = (before: Record<string, string>, after: Record<string, string>) => [
        ...Object.keys(after)
          .filter((f) => !(f in before))
          .map((f) => `new ${f}`),
        ...Object.keys(before)
          .filter((f) => !(f in after))
          .map((f) => `deleted ${f}`),
        ...Object.keys(before)
          .filter((f) => f in after && after[f] !== before[f])
          .map((f) => `rewrote ${f}`),
      ];
      const whole = tree(data);
      const check = (listed: { runs?: ListedRun[] }) => {
        const got = new Set(listed.runs?.map((x) => x.runId) ?? []);
        for (const id of expected) if (!got.has(id)) lost.add(id);
        return expected.length - expected.filter((id) => got.has(id)).length;
      };
      for (const file of files) {
        for (const mode of modes) {
          const copy = mkdtempSync(join(tmpdir(), 'sf-corrupt-'));
          scratch.push(copy);
          cpSync(data, join(copy, '.stepforge'), { recursive: true });
          const target = join(copy, '.stepforge', file);
          const original = readFileSync(target);
          if (mode === 'truncate') truncateSync(target, Math.floor(statSync(target).size / 2));
          else if (mode === 'garbage')
            writeFileSync(
              target,
              Buffer.concat([
                original.subarray(0, Math.floor(original.length / 3)),
                Buffer.from('\u0000garbage\n{"not":"a record"}\n[1,2,3]\n\u00ff\u00fe'),
                original.subarray(Math.floor(original.length / 3) + 20),
              ]),
            );
          else rmSync(target);
          corruptions++;
          const label = `${mode} ${file}`;
          const before = tree(join(copy, '.stepforge'));
          const r = await runsIn(copy);
          if (isInternal(r.stderr) || isInternal(r.stdout)) failures.push(`${label}: internal: ${r.stderr}`);
          if (r.code === 0 && r.runs !== undefined) {
            const missing = check(r);
            if (missing > 0) failures.push(`${label}: listed ${expected.length - missing} of ${expected.length} runs, exit 0`);
            else outcomes.whole++;
          } else if (namedError(r.stdout) !== undefined && namedError(r.stdout) !== 'internal') {
            outcomes.named++;
            if (/move (that|the) directory aside|start with an empty store/.test(r.stdout))
              failures.push(`${label}: the hint advises discarding data: ${r.stdout}`);
          } else {
            failures.push(`${label}: exit ${r.code}${r.signal ? ` (killed by ${r.signal})` : ''}: ${r.stderr}`);
          }
          // The command that only reads left every file as it was: none new (an orphan of a
          // compaction), none deleted, none rewritten (a log moved into a table, a new MANIFEST).
          const changed = changes(before, tree(join(copy, '.stepforge')));
          if (changed.length > 0) failures.push(`${label}: the command changed the project's files: ${changed.join(', ')}`);
          // With the file put back, every run is there. A folder byte for byte the one listed in
          // full at the start is that store (nothing to ask again); any other is asked.
          writeFileSync(target, original);
          const restored = tree(join(copy, '.stepforge'));
          if (changes(whole, restored).length > 0) {
            const again = await runsIn(copy);
            const missing = check(again);
            if (again.code !== 0 || missing > 0)
              failures.push(
                `${label}: after restoring the file, exit ${again.code}, ${expected.length - missing} of ${expected.length} runs: ${again.stderr}`,
              );
          }
          rmSync(copy, { recursive: true, force: true });
        }
      }
      process.stdout.write(
        `durability: ${corruptions} corruptions of ${files.length} store files (${[...kinds].join(', ')}): ${outcomes.named} named errors, ${outcomes.whole} with every run listed, ${failures.length} failures, ${lost.size} of ${expected.length} runs lost; ${Math.round((Date.now() - started) / 1000)} s\n`,
      );
      expect(failures).toEqual([]);
      expect(lost.size).toBe(0);
      expect([...kinds]).toEqual(expect.arrayContaining(['CURRENT', 'MANIFEST', '*.log', '*.ldb', 'engine/executions.ndjson']));
    },
    LONG ? 1_800_000 : 600_000,
  );
});
