// `stepforge serve FILE`: the file's workflows are served (a module's exported ones, or the one
// --export names), as `run FILE` runs them, instead of the project's workflows/ and examples/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { startServe, type ServeHandle } from '../../packages/cli/src/commands/serve.js';
import { REPO, bufferIo, cliIn, tempProject } from './support/testIo.js';

const CODE = join(REPO, 'examples', 'code');

describe('Command: serve FILE', () => {
  const project = tempProject('sf-serve-file-');
  let stack: EmbeddedStack;
  const handles: ServeHandle[] = [];
  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  });
  afterAll(async () => {
    for (const h of handles) await h.close();
    await stack.close();
    project.remove();
  });
  const serve = async (file: string, exportName?: string) => {
    const io = bufferIo(project.dir);
    const h = await startServe(io, new EmbeddedRunService(stack, project.dir), 0, {
      only: { file, ...(exportName !== undefined ? { exportName } : {}) },
    });
    handles.push(h);
    return { h, io };
  };
  const api = async (h: ServeHandle, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${h.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.token}` },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, json: (await r.json()) as any };
  };

  it('serves every workflow a module exports (with the children they call), and runs one through the API', async () => {
    const { h, io } = await serve(join(CODE, 'refund.ts'));
    expect(io.stderr()).toBe('');
    expect([...h.workflows].sort()).toEqual(['refund (refund: Refunds an order)', 'refund-quote (refund-quote: Quotes a refund)']);
    const started = await api(h, 'POST', '/workflows/refund/runs?wait=true', { input: { order: { total: 80, ageDays: 45 } } });
    expect(started.status).toBeLessThan(300);
    const runId = started.json.runId ?? started.json.run?.runId;
    const done = await new EmbeddedRunService(stack, project.dir).wait(runId);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toMatchObject({ refund: 40, reply: 'We refund 40 (half refund).' });
  });

  it('serves only the export --export names', async () => {
    const { h } = await serve(join(CODE, 'support.ts'), 'supportWorkflow');
    expect(h.workflows).toEqual(['support (support: Simple support flow)']);
  });

  it('refuses a module that exports no workflow (invalid_document), and usage errors on the command line', async () => {
    const err = await serve(join(REPO, 'test', 'e2e', 'support', 'testIo.ts')).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(err).toMatchObject({ code: 'invalid_document', message: expect.stringContaining('exports no workflow') });
    const cli = cliIn(project.dir);
    const two = await cli('serve', 'a.yaml', 'b.yaml');
    expect([two.code, two.err]).toEqual([2, expect.stringContaining('serve takes at most one FILE (got a.yaml b.yaml)')]);
    const exportOnly = await cli('serve', '--export', 'x');
    expect([exportOnly.code, exportOnly.err]).toEqual([2, expect.stringContaining('--export names a workflow of the FILE given to serve')]);
  });
});
