// Shared helpers of the end-to-end tests: a buffered CliIo, temp project dirs, the examples dir.
import { execFile, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { main, type CliIo } from '@stepforge/cli';

/** The repository root (examples/ and workflows/ live here). */
export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** Absolute path of an example file. */
export const example = (name: string) => join(REPO, 'examples', name);

/** A CliIo writing into buffers. */
export interface BufferIo extends CliIo {
  readonly stdout: () => string;
  readonly stderr: () => string;
  reset(): void;
}

/** A buffered, non-TTY CliIo rooted at `cwd`. */
export function bufferIo(cwd: string, env: NodeJS.ProcessEnv = {}): BufferIo {
  let out = '';
  let err = '';
  return {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    isTTY: false,
    cwd,
    env: { STEPFORGE_LOG_LEVEL: 'SILENT', ...env },
    stdout: () => out,
    stderr: () => err,
    reset() {
      out = '';
      err = '';
    },
  };
}

/** Runs `stepforge ARGV` in-process (the built CLI) in `cwd`: its exit code and what it printed. */
export function cliIn(cwd: string): (...argv: string[]) => Promise<{ code: number; out: string; err: string }> {
  return async (...argv) => {
    const io = bufferIo(cwd);
    const code = await main(argv, io);
    return { code, out: io.stdout(), err: io.stderr() };
  };
}

/** A fresh temp project directory and its remover. */
export function tempProject(prefix = 'sf-e2e-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The built `stepforge` binary (bin/stepforge.js, which loads dist/ or its bundle). */
export const STEPFORGE_BIN = join(REPO, 'packages', 'cli', 'bin', 'stepforge.js');

/** What a spawned command printed, and its exit code (-1 when it could not be run). */
export interface SpawnedRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built binary with `argv` in `cwd` (90 s at most), whatever its exit code. */
export async function spawnStepforge(cwd: string, env: NodeJS.ProcessEnv, argv: readonly string[]): Promise<SpawnedRun> {
  try {
    const r = await promisify(execFile)(process.execPath, [STEPFORGE_BIN, ...argv], { cwd, env, timeout: 90_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

/**
 * Runs the built binary with `argv` in `cwd` (90 s at most) with `stdin` as its standard input, a
 * file, as in `stepforge run review.json < diff` (a shell pipe reads the same): a socket, what Node
 * hands a child for `input:`, is read only when --input - asks for it. Logs are silenced.
 */
export function stepforgeWithStdin(
  cwd: string,
  argv: readonly string[],
  stdin = '',
  env: Record<string, string> = {},
): { code: number | null; out: string; err: string } {
  const file = join(cwd, '.stdin.txt');
  writeFileSync(file, stdin);
  const fd = openSync(file, 'r');
  try {
    const r = spawnSync(process.execPath, [STEPFORGE_BIN, ...argv], {
      cwd,
      stdio: [fd, 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', ...env },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  } finally {
    closeSync(fd);
  }
}
