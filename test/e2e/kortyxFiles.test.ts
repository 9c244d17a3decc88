// Kortyx's declarative workflow files (*.workflow.yaml / .yml / .json): loaded as the module they
// stand for, each node's run a module path (#export) from the file's folder, and run, compiled,
// validated and drawn like a module's workflow.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kortyxFileModule } from '@stepforge/compiler';
import { main } from '@stepforge/cli';
import { REPO, bufferIo } from './support/testIo.js';

const scratch = mkdtempSync(join(tmpdir(), 'sf-kortyx-file-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(cwd: string, ...argv: string[]) {
  const io = bufferIo(cwd);
  const code = await main(argv, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

describe('Kortyx workflow files (run, graph, validate)', () => {
  it('runs the YAML and the JSON form of the support flow: conditions and intents route, params reach the node', async () => {
    const yaml = await cli(
      scratch,
      'run',
      join(REPO, 'examples/kortyx/support.workflow.yaml'),
      '--input',
      '{"message":"I want a refund"}',
      '--json',
      '--in-memory',
    );
    expect(yaml.code).toBe(0);
    expect(JSON.parse(yaml.out)).toMatchObject({
      status: 'SUCCEEDED',
      output: { message: 'I want a refund', topic: 'refund', reply: 'Your refund has been started.' },
    });
    const json = await cli(
      scratch,
      'run',
      join(REPO, 'examples/kortyx/support.workflow.json'),
      '--input',
      '{"message":"hello"}',
      '--json',
      '--in-memory',
    );
    expect(JSON.parse(json.out)).toMatchObject({
      status: 'SUCCEEDED',
      output: { topic: 'question', reply: 'Thanks for your question. — the support team' },
    });
  });

  it('draws and validates a file like a module: states named after its nodes, bundled under .stepforge/code', async () => {
    const g = await cli(scratch, 'graph', join(REPO, 'examples/kortyx/support.workflow.yaml'), '--json');
    expect(JSON.parse(g.out)).toEqual({
      nodes: [
        { handle: 'classify', kind: 'node', tools: [] },
        { handle: 'answer', kind: 'node', tools: [] },
        { handle: 'refund', kind: 'node', tools: [] },
      ],
      edges: [
        [0, 1],
        [0, 2],
      ],
    });
    expect((await cli(scratch, 'validate', join(REPO, 'examples/kortyx/support.workflow.json'))).code).toBe(0);
  });

  it("takes a module's default export, or its only function, when run names no #export; and says which when there are several", async () => {
    const dir = join(scratch, 'pick');
    mkdirSync(join(dir, 'nodes'), { recursive: true });
    writeFileSync(join(dir, 'nodes', 'greet.mjs'), 'export default ({ input }) => ({ data: { greeting: `hi ${input.name}` } });\n');
    writeFileSync(
      join(dir, 'nodes', 'only.mjs'),
      'export const shout = ({ input }) => ({ data: { loud: input.greeting.toUpperCase() } });\nexport const VERSION = 1;\n',
    );
    writeFileSync(join(dir, 'nodes', 'two.mjs'), 'export const a = () => ({});\nexport const b = () => ({});\n');
    const wf = (third: string) =>
      `id: pick\nversion: "1"\nnodes:\n  greet: { run: ./nodes/greet.mjs }\n  shout: { run: ./nodes/only.mjs }\n  third: { run: ${third} }\nedges: [["__start__", "greet"], ["greet", "shout"], ["shout", "third"], ["third", "__end__"]]\n`;
    writeFileSync(join(dir, 'ok.workflow.yml'), wf('./nodes/two.mjs#b'));
    const ok = await cli(dir, 'run', 'ok.workflow.yml', '--input', '{"name":"Ada"}', '--json', '--in-memory');
    expect(JSON.parse(ok.out)).toMatchObject({ status: 'SUCCEEDED', output: { name: 'Ada', greeting: 'hi Ada', loud: 'HI ADA' } });
    writeFileSync(join(dir, 'bad.workflow.yml'), wf('./nodes/two.mjs'));
    const bad = await cli(dir, 'validate', 'bad.workflow.yml', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error).toMatchObject({
      class: 'module_load_failed',
      message:
        "cannot load the module bad.workflow.yml: node 'third': run './nodes/two.mjs': the module must export a default function or exactly one named function (found: a, b); name one with #export",
    });
  });
});

describe('Function: kortyxFileModule', () => {
  const base = {
    id: 'w',
    version: '1',
    nodes: { a: { run: './a.ts#a' } },
    edges: [
      ['__start__', 'a'],
      ['a', '__end__'],
    ],
  };
  const refused = (doc: unknown, file = 'w.workflow.json') => {
    try {
      kortyxFileModule(typeof doc === 'string' ? doc : JSON.stringify(doc), file);
    } catch (e) {
      return e as { code: string; message: string; location?: { line: number; column: number } };
    }
    throw new Error('accepted');
  };

  it('refuses a registry key in run (invalid_workflow), saying to name the module', () => {
    expect(refused({ ...base, nodes: { a: { run: 'chatNode' } } })).toMatchObject({
      code: 'invalid_workflow',
      message:
        "w.workflow.json: nodes.a.run: 'chatNode' is a key of Kortyx's in-process node registry (registerNode), which a workflow file run on Step Functions cannot reach: name the module instead, e.g. ./nodes/chatNode.ts#chatNode",
    });
  });

  it("refuses keys Kortyx's strict schema does not define, and schemas a file cannot hold", () => {
    expect(refused({ ...base, steps: [] }).message).toBe(
      'w.workflow.json: steps: unknown key (a Kortyx workflow has id, version, description, nodes, edges, metadata)',
    );
    expect(refused({ ...base, inputSchema: {} }).message).toContain('inputSchema is a zod schema, which a YAML or JSON file cannot hold');
    expect(refused({ ...base, nodes: { a: { run: './a.ts', retries: 2 } } }).message).toBe(
      'w.workflow.json: nodes.a.retries: unknown key (a node has run, params, metadata, behavior)',
    );
    expect(refused({ ...base, nodes: { a: { run: './a.ts', behavior: { checkpoint: 'yes' } } } }).message).toBe(
      'w.workflow.json: nodes.a.behavior.checkpoint: checkpoint must be true or false',
    );
    expect(refused({ ...base, edges: [['__start__', 'b']] }).message).toBe("w.workflow.json: edges.0.1: edge to unknown node 'b'");
  });

  it('names the line and column of a YAML or JSON syntax error', () => {
    expect(refused('id: w\nnodes: [a\n', 'w.workflow.yaml')).toMatchObject({
      code: 'invalid_yaml',
      message: 'Flow sequence in block collection must be sufficiently indented and end with a ]',
      location: { line: 3, column: 1 },
    });
    expect(refused('{"id": ', 'w.workflow.json').code).toBe('invalid_json');
  });
  it('warns of a plain edge beside when edges, which LangGraph runs side by side and a Choice does not', async () => {
    const dir = join(scratch, 'parallel-edges');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'nodes.mjs'),
      'export const classify = async () => ({ condition: "refund" });\nexport const refund = async () => ({});\nexport const log = async () => ({});\n',
    );
    writeFileSync(
      join(dir, 'flow.workflow.yaml'),
      [
        'id: flow',
        'version: 1.0.0',
        'nodes:',
        '  classify: { run: ./nodes.mjs#classify }',
        '  refund: { run: ./nodes.mjs#refund }',
        '  log: { run: ./nodes.mjs#log }',
        'edges:',
        '  - ["__start__", "classify"]',
        '  - ["classify", "refund", { when: "refund" }]',
        '  - ["classify", "log"]',
        '  - ["refund", "__end__"]',
        '  - ["log", "__end__"]',
        '',
      ].join('\n'),
    );
    const json = await cli(dir, 'validate', 'flow.workflow.yaml', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({
      ok: true,
      format: 'code',
      warnings: [
        {
          class: 'parallel_edges',
          message:
            "node 'classify' has a plain edge to 'log' beside when edges: Kortyx (LangGraph) runs every edge that leaves a node, so the plain edge's node and the matched when edge's node would both run; here the edges are one choice, and 'log' runs only when no when edge matches. Give it a when, or route in the node",
          line: 1,
          column: 1,
        },
      ],
    });
    const text = await cli(dir, 'validate', 'flow.workflow.yaml');
    expect(text.out).toBe('ok\n');
    expect(text.err).toContain("warning[parallel_edges] flow.workflow.yaml:1:1: node 'classify' has a plain edge to 'log'");
    // The support flow's edges leave each node as one choice: no warning.
    const support = await cli(scratch, 'validate', join(REPO, 'examples/kortyx/support.workflow.yaml'), '--json');
    expect(JSON.parse(support.out).warnings).toEqual([]);
  });
});
