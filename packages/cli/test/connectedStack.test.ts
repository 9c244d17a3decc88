import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../src/main.js';
import { serveHooks, type ServeHandle } from '../src/commands/serve.js';
import { openStack } from '../../embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../embedded/src/RunService.js';

const QUICKSTART = resolve(fileURLToPath(new URL('../../../examples/quickstart.chain.yaml', import.meta.url)));

describe('Function: openStack', () => {
  it('connects to the live owner published in .stepforge/stack.json instead of opening the store again', async () => {
    const ownerDir = mkdtempSync(join(tmpdir(), 'sf-owner-'));
    const clientDir = mkdtempSync(join(tmpdir(), 'sf-client-'));
    const owner = await openStack({ projectDir: ownerDir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    try {
      expect(owner.owner).toBe(true);
      // Another live process owns the client's project: here the owner above, published under the
      // parent process's pid (alive, and not ours, exactly as a second terminal would see it).
      mkdirSync(join(clientDir, '.stepforge'), { recursive: true });
      writeFileSync(
        join(clientDir, '.stepforge', 'stack.json'),
        JSON.stringify({ pid: process.ppid, startedAt: new Date().toISOString(), ...owner.endpoints }),
      );
      const client = await openStack({ projectDir: clientDir, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
      try {
        expect(client.owner).toBe(false);
        expect(client.engine).toBeUndefined();
        expect(client.endpoints.sfnEndpoint).toBe(owner.endpoints.sfnEndpoint);
        // A run started through the connection executes in the owner (its handlers) and is visible to both.
        const service = new EmbeddedRunService(client, clientDir);
        const { entry } = await service.catalog.registerFile(QUICKSTART);
        const { run } = await service.start(entry, { topic: 'tides' });
        const done = await service.wait(run.runId);
        expect(done.status).toBe('SUCCEEDED');
        expect((await owner.runtime.runs.getRun(run.runId))?.status).toBe('SUCCEEDED');
        expect((await owner.runtime.runs.listSteps(run.runId)).map((s) => s.stepId).sort()).toEqual([
          'critique',
          'draft',
          'judge',
          'plan:reason#turn0',
        ]);
      } finally {
        await client.close();
      }
    } finally {
      await owner.close();
      rmSync(ownerDir, { recursive: true, force: true });
      rmSync(clientDir, { recursive: true, force: true });
    }
  });

  // Another live process holds the client's project: the owner below, published under the parent
  // process's pid (alive, and not ours), with the API URL a serve publishes or without it.
  const holding = async (apiUrl: string | undefined, f: (clientDir: string, release: () => void) => Promise<void>) => {
    const ownerDir = mkdtempSync(join(tmpdir(), 'sf-owner-'));
    const clientDir = mkdtempSync(join(tmpdir(), 'sf-client-'));
    const owner = await openStack({ projectDir: ownerDir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    const file = join(clientDir, '.stepforge', 'stack.json');
    try {
      mkdirSync(join(clientDir, '.stepforge'), { recursive: true });
      writeFileSync(
        file,
        JSON.stringify({ pid: process.ppid, startedAt: new Date().toISOString(), ...owner.endpoints, ...(apiUrl ? { apiUrl } : {}) }),
      );
      await f(clientDir, () => rmSync(file));
    } finally {
      await owner.close();
      rmSync(ownerDir, { recursive: true, force: true });
      rmSync(clientDir, { recursive: true, force: true });
    }
  };

  it('refuses to serve on a stack another serve holds (error[stack_in_use]), and opens nothing', async () => {
    await holding('http://127.0.0.1:8787', async (clientDir) => {
      let out = '';
      let err = '';
      const code = await main(['serve', '--port', '0'], {
        out: (t) => {
          out += t;
        },
        err: (t) => {
          err += t;
        },
        isTTY: false,
        cwd: clientDir,
        env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
      });
      expect(code).toBe(1);
      expect(out).toBe('');
      expect(err).toContain(
        `error[stack_in_use] another stepforge serve (pid ${process.ppid}) serves this project's stack at http://127.0.0.1:8787`,
      );
      expect(err).toContain('= help: use that one (every command of this project connects to it), or stop it before starting serve here');
    });
  });

  it('waits for a command that holds the stack to end, then serves on it as its owner', async () => {
    await holding(undefined, async (clientDir, release) => {
      let out = '';
      let err = '';
      let served: ServeHandle | undefined;
      serveHooks.onListening = (h) => {
        served = h;
      };
      try {
        const code = main(['serve', '--port', '0'], {
          out: (t) => {
            out += t;
          },
          err: (t) => {
            err += t;
          },
          isTTY: false,
          cwd: clientDir,
          env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
        });
        for (let i = 0; i < 200 && err === ''; i++) await new Promise((r) => setTimeout(r, 10));
        expect(err).toBe(
          `note: another stepforge command (pid ${process.ppid}) holds this project's stack; serve starts once it ends (Ctrl-C to give up)\n`,
        );
        await new Promise((r) => setTimeout(r, 600));
        expect(served).toBeUndefined();
        release();
        for (let i = 0; i < 500 && !served; i++) await new Promise((r) => setTimeout(r, 20));
        expect(served).toBeDefined();
        expect(out).toContain(`Stepforge API      ${served!.url}`);
        // It holds the stack now: it published its own endpoints and API URL.
        const published = JSON.parse(readFileSync(join(clientDir, '.stepforge', 'stack.json'), 'utf8')) as { pid: number; apiUrl?: string };
        expect(published).toMatchObject({ pid: process.pid, apiUrl: served!.url });
        await served!.close();
        expect(await code).toBe(0);
        // The note came once, however many times it looked.
        expect(err.match(/note:/g)).toHaveLength(1);
      } finally {
        delete serveHooks.onListening;
      }
    });
  });

  it('shares a stack this process already owns for the same project', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-share-'));
    const first = await openStack({ projectDir: dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    const second = await openStack({ projectDir: dir, inMemory: true });
    try {
      expect(second.endpoints).toEqual(first.endpoints);
      await first.close();
      // Still usable: the last close shuts it down.
      expect(await second.runtime.runs.listRuns()).toEqual([]);
    } finally {
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
