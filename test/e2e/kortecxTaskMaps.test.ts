// Chain documents with Kortecx task maps, as a user runs them: `graph --format kortecx` prints Kortecx's
// canonical lowering byte for byte, and the documents marked `run` run embedded on the local provider.
// With STEPFORGE_KORTECX_CORPUS naming a copy of Kortecx's own parity corpus (not in this repository:
// its licence is not open source), every case of it is checked too; without it that test is skipped.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, cliIn, tempProject } from './support/testIo.js';

interface KortecxCase {
  name: string;
  document: string;
  kortecx_error?: string;
  run?: boolean;
}

const CORPUS_DIR = join(REPO, 'packages', 'compiler', 'test', 'kortecx');
const corpus = parse(readFileSync(join(CORPUS_DIR, 'corpus.yaml'), 'utf8')) as KortecxCase[];
const expected = JSON.parse(readFileSync(join(CORPUS_DIR, 'expected.json'), 'utf8')) as Record<string, unknown>;
const slug = (name: string) =>
  name
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);

describe('Command: graph --format kortecx', () => {
  const project = tempProject('sf-kortecx-');
  afterAll(() => project.remove());
  const stepforge = cliIn(project.dir);

  it.each(corpus.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const file = `${slug(name)}.chain.yaml`;
    writeFileSync(join(project.dir, file), c.document);
    const r = await stepforge('graph', file, '--format', 'kortecx');
    if (c.kortecx_error) {
      expect(r.code).toBe(1);
      expect(r.err).toContain(`error[${c.kortecx_error}]`);
      expect(r.err).toContain(`${file}:`);
      return;
    }
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(JSON.stringify(expected[name]) + '\n');
  });

  it('refuses a bare expression and a DSL document, naming what it needs', async () => {
    const bare = await stepforge('graph', '--expr', 'a > b', '--format', 'kortecx');
    expect(bare.code).toBe(2);
    expect(bare.err).toContain('--format kortecx needs a chain document (FILE)');
    writeFileSync(
      join(project.dir, 'flow.yaml'),
      'document: { dsl: "1.0.0", name: Flow, version: "0.1.0" }\nfunctions: { echo: {} }\nsteps:\n  a: { call: function, function: echo, input: {} }\n',
    );
    const dsl = await stepforge('graph', 'flow.yaml', '--format', 'kortecx');
    expect(dsl.code).toBe(1);
    expect(dsl.err).toContain('error[invalid_document]');
    expect(dsl.err).toContain('is a dsl document (use --format json)');
  });

  const upstream = process.env.STEPFORGE_KORTECX_CORPUS;
  const haveUpstream = upstream !== undefined && existsSync(upstream);
  it.skipIf(!haveUpstream)(
    `matches Kortecx's own corpus case by case (STEPFORGE_KORTECX_CORPUS${haveUpstream ? '' : ' not set: skipped'})`,
    async () => {
      const cases = JSON.parse(readFileSync(upstream!, 'utf8')) as {
        name: string;
        dsl: string;
        seed?: number;
        context_bundles?: string[];
        tasks: unknown;
        expect?: unknown;
        error?: string;
      }[];
      // Kortecx's error classes are ours, by name; `parse` covers an empty expression too.
      const mismatches: string[] = [];
      for (const c of cases) {
        const doc = {
          chain: c.dsl,
          ...(c.seed !== undefined ? { seed: c.seed } : {}),
          ...(c.context_bundles ? { context_bundles: c.context_bundles } : {}),
          tasks: c.tasks,
        };
        const file = `upstream-${slug(c.name)}.chain.json`;
        writeFileSync(join(project.dir, file), JSON.stringify(doc, null, 2));
        const r = await stepforge('graph', file, '--format', 'kortecx');
        if (c.error !== undefined) {
          if (r.code !== 1 || !r.err.includes(`error[${c.error}]`))
            mismatches.push(`${c.name}: expected error[${c.error}], got ${r.code} ${r.out}${r.err}`);
        } else if (r.code !== 0 || JSON.stringify(JSON.parse(r.out)) !== JSON.stringify(c.expect)) {
          mismatches.push(`${c.name}: expected ${JSON.stringify(c.expect)}, got ${r.out}${r.err}`);
        }
      }
      expect(mismatches).toEqual([]);
    },
  );
});

// The offline provider echoes its prompt (and the parents' outputs it was shown).
const fromInput = (prompt: string) =>
  `[offline:echo] ${prompt}\n\nContext from earlier steps:\n--- Output of step "a" ---\n{\n  "topic": "tide pools"\n}`;
const listed = expect.stringMatching(
  /^\[offline:echo\] Summarize\.\n\nContext from earlier steps:\n--- Output of step "t" ---\n\{\n  "path": "\.",\n  "entries": \[/,
);
const RUN_OUTPUTS: Record<string, unknown> = {
  // A bare pure step with one parent passes that parent's output through.
  'agentic model step then a bare pure step': '[offline:echo] Research the topic.',
  'tool grant in tool_contract instead of a tag': '[offline:echo] List the files.',
  'agentic budget as task fields': '[offline:echo] List the files.',
  'a bare model id without a provider': '[offline:echo] go',
  // The tool step ran fs-list with the arguments from `args` / `params["kx.tool.args"]`.
  'tool step with args': listed,
  'tool step with its args folded into params': listed,
  // An entry pure step passes the workflow input; a pure step with two parents, their outputs by handle.
  'fan-out from a pure step to two models, fan-in to a pure step': {
    p: fromInput('Plan.'),
    q: fromInput('Check.'),
  },
  // Tasks without `kind`: the model plans, the tool step lists the folder, the bare pure step passes that on.
  'kind inferred from model_id, prompt, tool_contract and nothing': expect.objectContaining({ path: '.', entries: expect.any(Array) }),
};

describe('Command: run (Kortecx task maps, embedded, local provider)', () => {
  const project = tempProject('sf-kortecx-run-');
  afterAll(() => project.remove());
  const stepforge = cliIn(project.dir);

  it.each(corpus.filter((c) => c.run).map((c) => [c.name, c] as const))(
    '%s',
    async (name, c) => {
      const file = `${slug(name)}.chain.yaml`;
      writeFileSync(join(project.dir, file), c.document);
      const r = await stepforge('run', file, '--input', '{"topic":"tide pools"}', '--json');
      expect(r.err).not.toContain('error[');
      const result = JSON.parse(r.out) as { status: string; output: unknown };
      expect(result.status).toBe('SUCCEEDED');
      const expectation = RUN_OUTPUTS[name];
      expect(expectation, `no expected output for '${name}'`).toBeDefined();
      expect(result.output).toEqual(expectation);
    },
    120_000,
  );

  it("runs Kortecx's bundled echo tool, here a built-in: a tool task's q comes back as its output", async () => {
    writeFileSync(
      join(project.dir, 'echo.chain.yaml'),
      [
        'chain: "plan@echo > say"',
        'tasks:',
        '  plan: { kind: model, prompt: "Plan." }',
        '  say: { kind: tool, tool_contract: { echo: "1" }, params: { "kx.tool.args": \'{"q":"hello from kortecx"}\' } }',
        '',
      ].join('\n'),
    );
    const r = await stepforge('run', 'echo.chain.yaml', '--json');
    expect(r.err).not.toContain('error[');
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: 'hello from kortecx' });
    // Its id in Kortecx's registry, as Kortecx's own examples grant it, is the same tool.
    writeFileSync(
      join(project.dir, 'echo-id.chain.yaml'),
      [
        'chain: "plan > say"',
        'tasks:',
        '  plan: { kind: model, prompt: "Plan.", tool_contract: { "mcp-echo/echo": "1" } }',
        '  say: { kind: tool, tool_contract: { "mcp-echo/echo": "1" }, params: { "kx.tool.args": \'{"q":"by its id"}\' } }',
        '',
      ].join('\n'),
    );
    const byId = await stepforge('run', 'echo-id.chain.yaml', '--json');
    expect(byId.err).not.toContain('error[');
    expect(JSON.parse(byId.out)).toMatchObject({ status: 'SUCCEEDED', output: 'by its id' });
    // Another server/tool id cannot name a tool here; the error says which names do.
    writeFileSync(
      join(project.dir, 'gmail-id.chain.yaml'),
      'chain: "plan@echo > say"\ntasks:\n  plan: { kind: model, prompt: "Plan." }\n  say: { kind: tool, tool_contract: { "gmail/search": "1" } }\n',
    );
    const id = await stepforge('validate', 'gmail-id.chain.yaml', '--json');
    expect(JSON.parse(id.out).error).toMatchObject({
      class: 'invalid_task',
      message:
        "tasks.say.tool_contract: 'gmail/search' cannot name a tool here: Stepforge's tools are named [A-Za-z_][A-Za-z0-9_-]*; use the name of an installed tool (e.g. web-search, fs-list, echo)",
      line: 4,
      column: 39,
    });
  });
});
