// A Kortyx defineWorkflow call that refuses its definition while the module loads is the
// definition's fault, not the module's: `invalid_workflow` at the offending entry of the file, with
// what to write, rather than `module_load_failed` at 1:1.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo } from './support/testIo.js';

const repo = join(__dirname, '..', '..');
const compiler = JSON.stringify(join(repo, 'packages/compiler/dist/index.js'));

async function validate(source: string): Promise<{ code: number; error: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-kortyx-invalid-'));
  writeFileSync(join(dir, 'flow.mjs'), source);
  const io = bufferIo(dir);
  const code = await main(['validate', 'flow.mjs', '--json'], io);
  return { code, error: (JSON.parse(io.stdout()) as { error: Record<string, unknown> }).error };
}

describe('Command: validate FILE.mjs (a malformed Kortyx defineWorkflow)', () => {
  it('reports an edge naming no node as invalid_workflow at that name, saying which nodes there are', async () => {
    const r = await validate(
      `import { defineWorkflow } from ${compiler};
const greet = () => ({});
export const flow = defineWorkflow({
  id: 'flow',
  version: '1',
  nodes: { greet: { run: greet } },
  edges: [
    ['__start__', 'greet'],
    ['greet', 'shout'],
  ],
});
`,
    );
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({
      class: 'invalid_workflow',
      message: "invalid workflow 'flow': edges.1.1: edge to unknown node 'shout'",
      line: 9,
      column: 15,
      hint: 'end the edge at a node of `nodes` (greet), or at "__end__"',
    });
  });

  it('reports nodes that are not an object at the nodes key', async () => {
    const r = await validate(
      `import { defineWorkflow } from ${compiler};
export const other = defineWorkflow({ id: 'other', version: '1', nodes: { a: { run: () => ({}) } }, edges: [['__start__', 'a']] });
export const flow = defineWorkflow({
  id: 'flow', version: '1',
  // nodes written as a list by mistake
  nodes: [{ run: () => ({}) }],
  edges: [['__start__', 'a']],
});
`,
    );
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({
      class: 'invalid_workflow',
      line: 6,
      column: 3,
      hint: 'write nodes as an object of node definitions: nodes: { greet: { run: greetNode } }',
    });
    expect(r.error.message).toMatch(/^invalid workflow 'flow': nodes: nodes must be an object of node definitions/);
  });

  it('still reports a module whose top level throws something else as module_load_failed', async () => {
    const r = await validate('throw new Error("no database configured");\n');
    expect(r.error).toMatchObject({ class: 'module_load_failed', line: 1, column: 1 });
  });
});
