import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../dist/StackRegistry.js', import.meta.url));

/** A pid that was a process's and has ended. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

/**
 * `n` processes claiming the stack at the same moment (a shared start time), each staying alive
 * a while after, as a claimer does while it starts the stack. What each tryClaim answered.
 */
async function claimAtOnce(dataDir: string, n: number): Promise<boolean[]> {
  // Far enough ahead for every process to have loaded by then, on a loaded machine too.
  const at = Date.now() + 4000;
  const script = `import(${JSON.stringify(DIST)}).then(({ StackRegistry }) => {
    const r = new StackRegistry(${JSON.stringify(dataDir)});
    while (Date.now() < ${at}) {}
    const won = r.tryClaim();
    console.log(won ? 'won' : 'lost');
    setInterval(() => {}, 1000);
  });`;
  // Each stays alive (holding what it won) until every one has answered, then all are ended.
  const children = Array.from({ length: n }, () => spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] }));
  try {
    return await Promise.all(
      children.map(
        (c) =>
          new Promise<boolean>((resolve, reject) => {
            let out = '';
            c.stdout.on('data', (d: Buffer) => {
              out += d.toString();
              if (out.includes('\n')) resolve(out.trim() === 'won');
            });
            c.once('exit', () => reject(new Error(`a claimer ended without answering: ${out}`)));
          }),
      ),
    );
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

describe.skipIf(!existsSync(DIST))('Class: StackRegistry (built dist/)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('Method: tryClaim', () => {
    it('lets one of many processes claiming at once own the stack, on a fresh project', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'sf-claim-'));
      dirs.push(dataDir);
      const won = await claimAtOnce(dataDir, 8);
      expect(won.filter(Boolean)).toHaveLength(1);
    }, 60_000);

    it("lets one of many processes break a lock left by a process that ended (before: several removed each other's lock and all owned it)", async () => {
      for (let round = 0; round < 2; round++) {
        const dataDir = mkdtempSync(join(tmpdir(), 'sf-claim-'));
        dirs.push(dataDir);
        mkdirSync(dataDir, { recursive: true });
        writeFileSync(join(dataDir, 'stack.lock'), String(deadPid()));
        const won = await claimAtOnce(dataDir, 8);
        expect([round, won.filter(Boolean).length]).toEqual([round, 1]);
        expect(existsSync(join(dataDir, 'stack.lock.break'))).toBe(false);
      }
    }, 90_000);
  });
});
