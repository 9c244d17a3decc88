// Whole-process start-up of the built `stepforge` binary, as a user meets it: each command a fresh
// `node packages/cli/bin/stepforge.js …` process, next to the floor every Node program pays (`node -e
// 0`), in one run, interleaved (round by round, every command once per round, so that the host's
// load moves all of them alike). Prints the median wall time, the median CPU (user + system, of the
// process and its threads), the median minor page faults and the ratio of each median to the floor's, next to the targets
// (`--help` ≤ 1.5×, `validate` ≤ 2×, `run` of the quickstart ≤ 3×); `run --help` beside them. Figures are
// printed, never asserted.
//
// The commands run in a scratch project (mkdtemp): `run` keeps its store under that project's
// `.stepforge/` (on disk, the CLI's default), and the model steps run on the deterministic local
// provider (offline). A first round, not counted, writes each command's V8 code cache, as a user's
// first run of a command does. `run …, serve up` runs the same workflow while a `stepforge serve`
// of the same project is up: through the thin client (the command runs on serve), and, with
// STEPFORGE_NO_RELAY=1, in its own process connected to serve's stack.
// With NODE_EXTRA_CA_CERTS set, the floor, `--help`, `validate` and `run` are also run without it.
//
//   npm run bench -- cli                 # ROUNDS=9 by default
//   ROUNDS=15 npm run bench -- cli
//   CLI_BENCH_BASELINE=/path/to/other/checkout npm run bench -- cli   # also that tree's built binary,
//     command by command in the same rounds (its code caches go to a scratch folder, not its tree)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'packages', 'cli', 'bin', 'stepforge.js');

interface Case {
  readonly label: string;
  readonly argv: readonly string[];
  readonly target?: number;
  readonly live?: boolean;
  readonly noRelay?: boolean;
  readonly bin?: string;
  readonly cacheDir?: string;
  /** Run with NODE_EXTRA_CA_CERTS unset (see the rows this adds in cliBench). */
  readonly noExtraCa?: boolean;
}

/**
 * CPU ms (user + system) and minor page faults of this process's waited-for children so far, from
 * /proc (Linux), else undefined. Faults: on the 2-core build VM each fresh page a process touches
 * costs 10-15 us, so they are a cost of their own there.
 */
function childrenUsage(): { cpuMs: number; faults: number } | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command name: cminflt is the 9th field, cutime and cstime the 14th and 15th (clock ticks, 100 a second).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { cpuMs: (Number(fields[13]) + Number(fields[14])) * 10, faults: Number(fields[8]) };
  } catch {
    return undefined;
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Measured {
  readonly wallMs: number;
  readonly cpuMs: number | undefined;
  readonly faults: number | undefined;
}

function runOnce(c: Case, cwd: string, round: number): Measured {
  // `new` refuses to overwrite its output: each round writes a file of its own.
  const argv = c.argv.map((a) => a.replace('{round}', String(round)));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STEPFORGE_LOG_LEVEL: 'SILENT',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...(c.cacheDir ? { STEPFORGE_CODE_CACHE_DIR: c.cacheDir } : {}),
    ...(c.noRelay ? { STEPFORGE_NO_RELAY: '1' } : {}),
  };
  if (!c.noRelay) delete env.STEPFORGE_NO_RELAY;
  if (c.noExtraCa) delete env.NODE_EXTRA_CA_CERTS;
  delete env.STEPFORGE_NO_BUNDLE;
  const before = childrenUsage();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, argv[0] === '-e' ? [...argv] : [c.bin ?? BIN, ...argv], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const wallMs = performance.now() - t0;
  const after = childrenUsage();
  if (r.status !== 0) {
    throw new Error(`cli bench: \`${c.label}\` exited ${r.status}: ${r.stderr.slice(0, 400)}`);
  }
  return {
    wallMs,
    cpuMs: before === undefined || after === undefined ? undefined : after.cpuMs - before.cpuMs,
    faults: before === undefined || after === undefined ? undefined : after.faults - before.faults,
  };
}

/** Starts `stepforge serve` in `cwd` and resolves once its stack answers (its stack.json is written). */
async function startServe(cwd: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    cwd,
    env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/listening|http:\/\/127\.0\.0\.1/i.test(out)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`cli bench: serve exited ${code} before it listened: ${out.slice(0, 400)}`)));
  });
  return child;
}

export default async function cliBench(): Promise<void> {
  if (!existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'))) {
    console.log('cli bench: the CLI is not built (npm run build); skipped');
    return;
  }
  const rounds = Number(process.env.ROUNDS ?? 9);
  const project = mkdtempSync(join(tmpdir(), 'sf-cli-bench-'));
  let serve: ChildProcess | undefined;
  try {
    copyFileSync(join(REPO, 'examples', 'quickstart.chain.yaml'), join(project, 'quickstart.chain.yaml'));
    const cases: Case[] = [
      { label: 'node -e 0 (the floor)', argv: ['-e', '0'] },
      { label: 'stepforge --help', argv: ['--help'], target: 1.5 },
      // A stack command's help: answered from the help bundle, with no stack and no dynalite worker.
      { label: 'stepforge run --help', argv: ['run', '--help'] },
      { label: 'stepforge validate quickstart', argv: ['validate', 'quickstart.chain.yaml'], target: 2 },
      { label: 'stepforge graph quickstart', argv: ['graph', 'quickstart.chain.yaml'] },
      { label: 'stepforge compile quickstart', argv: ['compile', 'quickstart.chain.yaml', '-o', 'out'] },
      { label: 'stepforge new swarm', argv: ['new', 'swarm', '-o', 'swarm-{round}.chain.yaml'] },
      {
        label: 'stepforge run quickstart (5 steps, offline)',
        argv: ['run', 'quickstart.chain.yaml', '--input', '{"topic":"tide pools"}', '--json'],
        target: 3,
      },
    ];
    // NODE_EXTRA_CA_CERTS makes every Node process parse that file's certificates (and build
    // OpenSSL's root store) before its first line runs: with the Debian bundle, 4 in 5 of `node -e
    // 0`'s instructions on the build machine (505 M against 82 M, callgrind). Set, it raises the
    // floor and every command alike, so each ratio reads better than without it: the floor and the
    // targeted commands are run without it too, in the same rounds, and their ratios are to that floor.
    if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
      const noCa = [
        'node -e 0 (the floor)',
        'stepforge --help',
        'stepforge validate quickstart',
        'stepforge run quickstart (5 steps, offline)',
      ];
      for (const c of cases.filter((x) => noCa.includes(x.label)))
        cases.push({ ...c, label: `${c.label}, no NODE_EXTRA_CA_CERTS`, noExtraCa: true });
    }
    const baseline = process.env.CLI_BENCH_BASELINE;
    if (baseline) {
      const bin = join(baseline, 'packages', 'cli', 'bin', 'stepforge.js');
      if (!existsSync(bin)) throw new Error(`cli bench: CLI_BENCH_BASELINE has no ${bin}`);
      // Its own project folder, so that the two trees' run stores never meet.
      mkdirSync(join(project, 'baseline', 'caches'), { recursive: true });
      copyFileSync(join(REPO, 'examples', 'quickstart.chain.yaml'), join(project, 'baseline', 'quickstart.chain.yaml'));
      for (const c of cases.slice(1).filter((x) => !x.noExtraCa))
        cases.push({ label: `${c.label} [baseline]`, argv: c.argv, bin, cacheDir: join(project, 'baseline', 'caches') });
    }
    const samples = new Map<string, { wall: number[]; cpu: number[]; faults: number[] }>();
    const record = (label: string, m: Measured) => {
      const s = samples.get(label) ?? { wall: [], cpu: [], faults: [] };
      samples.set(label, s);
      s.wall.push(m.wallMs);
      if (m.cpuMs !== undefined) s.cpu.push(m.cpuMs);
      if (m.faults !== undefined) s.faults.push(m.faults);
    };
    for (let round = -1; round < rounds; round++) {
      for (const c of cases) {
        const s = runOnce(c, c.bin ? join(project, 'baseline') : project, round);
        if (round >= 0) record(c.label, s);
      }
    }
    // `run` with a live stack: the same project with `serve` up, again interleaved with the floor.
    const live: Case = {
      label: 'stepforge run quickstart, `serve` up (thin client)',
      argv: cases.find((c) => c.label.startsWith('stepforge run quickstart') && c.bin === undefined)!.argv,
      live: true,
    };
    // The same, run in its own process and connected to serve's stack, as before the thin client.
    const connected: Case = { ...live, label: 'stepforge run quickstart, `serve` up, connected (STEPFORGE_NO_RELAY=1)', noRelay: true };
    serve = await startServe(project);
    for (let round = -1; round < rounds; round++) {
      const floor = runOnce(cases[0]!, project, round);
      const s = runOnce(live, project, round);
      const c = runOnce(connected, project, round);
      if (round < 0) continue;
      record('node -e 0 (beside serve)', floor);
      record(live.label, s);
      record(connected.label, c);
    }

    const floor = median(samples.get(cases[0]!.label)!.wall);
    const floorNoCa = samples.has(`${cases[0]!.label}, no NODE_EXTRA_CA_CERTS`)
      ? median(samples.get(`${cases[0]!.label}, no NODE_EXTRA_CA_CERTS`)!.wall)
      : floor;
    const floorServe = median(samples.get('node -e 0 (beside serve)')!.wall);
    console.log(
      `cli: ${rounds} interleaved rounds after one uncounted round; ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    if (process.env.NODE_EXTRA_CA_CERTS !== undefined)
      console.log(
        `NODE_EXTRA_CA_CERTS is set (${process.env.NODE_EXTRA_CA_CERTS}): every process loads it first; the rows "no NODE_EXTRA_CA_CERTS" are run without it, their ratios to the floor without it`,
      );
    console.log('| command | wall median | CPU median | minor faults median | wall ÷ floor | target |');
    console.log('|---|---|---|---|---|---|');
    for (const [label, s] of samples) {
      const c = [...cases, live, connected].find((x) => x.label === label);
      const base =
        label === live.label || label === connected.label || label === 'node -e 0 (beside serve)'
          ? floorServe
          : c?.noExtraCa
            ? floorNoCa
            : floor;
      const cpu = s.cpu.length > 0 ? `${median(s.cpu).toFixed(0)} ms` : 'n/a';
      const faults = s.faults.length > 0 ? median(s.faults).toFixed(0) : 'n/a';
      const target = c?.target !== undefined ? `≤ ${c.target}×` : '';
      console.log(
        `| ${label} | ${median(s.wall).toFixed(0)} ms | ${cpu} | ${faults} | ${(median(s.wall) / base).toFixed(2)}× | ${target} |`,
      );
    }
  } finally {
    if (serve) {
      serve.kill('SIGTERM');
      await new Promise((r) => serve!.once('exit', r));
    }
    rmSync(project, { recursive: true, force: true });
  }
}
