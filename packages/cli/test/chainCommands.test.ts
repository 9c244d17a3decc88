import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import type { CliIo } from '../src/CliIo.js';

/** A CliIo that records what a command printed. */
function bufferIo(cwd: string): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
    isTTY: false,
    cwd,
    env: {},
  };
  return io;
}

async function run(argv: string[], cwd: string) {
  const io = bufferIo(cwd);
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'stepforge-chain-cli-'));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return name;
};

const GOOD = `chain: "plan@web-search > [draft & critique] > judge"
tasks:
  plan: { kind: model, prompt: "Plan \${input.topic}" }
  draft: { kind: model, prompt: "Draft" }
  critique: { kind: model, prompt: "Critique" }
  judge: { kind: model, prompt: "Judge" }
  spare: { kind: model, prompt: "never used" }
`;

describe('Function: main (stepforge graph)', () => {
  it('prints the graph of a bare expression as JSON, every handle a model step', async () => {
    const r = await run(['graph', '--expr', 'a > [b & c]', '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      nodes: [
        { handle: 'a', kind: 'model', tools: [] },
        { handle: 'b', kind: 'model', tools: [] },
        { handle: 'c', kind: 'model', tools: [] },
      ],
      edges: [
        [0, 1],
        [0, 2],
      ],
    });
  });

  it('prints exactly the documented JSON for a chain document', async () => {
    const r = await run(['graph', write('good.chain.yaml', GOOD), '--json'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      '{"nodes":[{"handle":"plan","kind":"model","tools":["web-search"]},{"handle":"draft","kind":"model","tools":[]},' +
        '{"handle":"critique","kind":"model","tools":[]},{"handle":"judge","kind":"model","tools":[]}],"edges":[[0,1],[0,2],[1,3],[2,3]]}\n',
    );
  });

  it('accepts --format json as a synonym of --json', async () => {
    const a = await run(['graph', 'good.chain.yaml', '--json'], dir);
    const b = await run(['graph', 'good.chain.yaml', '--format', 'json'], dir);
    expect(b.out).toBe(a.out);
  });

  it('draws Mermaid and DOT', async () => {
    const m = await run(['graph', 'good.chain.yaml', '--format', 'mermaid'], dir);
    expect(m.code).toBe(0);
    expect(m.out.split('\n')).toEqual(
      expect.arrayContaining(['flowchart TD', '  n0["plan<br/>(model)<br/>@web-search"]', '  n0 --> n1', '  n2 --> n3']),
    );
    const d = await run(['graph', 'good.chain.yaml', '--format', 'dot'], dir);
    expect(d.code).toBe(0);
    expect(d.out).toMatch(/^digraph workflow \{/);
    expect(d.out).toContain('n0 [label="plan\\n(model)\\n@web-search", shape=box];');
    expect(d.out).toContain('n1 -> n3;');
  });

  it('prints a readable text listing by default', async () => {
    const r = await run(['graph', 'good.chain.yaml'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain('4 step(s), 4 edge(s)');
    expect(r.out).toContain('plan > draft');
  });

  it('checks topology only: a document without any tool grant still graphs', async () => {
    const f = write('notools.chain.yaml', 'chain: a > b\ntasks:\n  a: {kind: model, prompt: x}\n  b: {kind: model}\n');
    const r = await run(['graph', f, '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).edges).toEqual([[0, 1]]);
  });

  it('reports a parse error in an expression with its column, as text and as JSON', async () => {
    const t = await run(['graph', '--expr', 'a > [b & c'], dir);
    expect(t.code).toBe(1);
    expect(t.err).toBe("error[parse] <expr>:1:5: unbalanced bracket: '[' is never closed\n  |\n1 | a > [b & c\n  |     ^\n");
    const j = await run(['graph', '--expr', 'a > [b & c', '--json'], dir);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.out).error).toEqual({
      class: 'parse',
      message: "unbalanced bracket: '[' is never closed",
      line: 1,
      column: 5,
      file: '<expr>',
    });
  });

  it('reports an unknown handle at its line and column in the file', async () => {
    const f = write('unknown.chain.yaml', 'tasks:\n  draft: {kind: model, prompt: x}\nchain: >\n  draft > drat\n');
    const r = await run(['graph', f, '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toEqual({
      class: 'unknown_handle',
      message: "unknown task handle 'drat'; did you mean 'draft'?",
      line: 4,
      column: 11,
      file: 'unknown.chain.yaml',
    });
  });

  it('graphs a workflow DSL document too, with nested steps under their parent', async () => {
    const f = write(
      'loop.yaml',
      [
        'document: {dsl: "1.0", name: loop}',
        'agents:',
        '  thinker: {description: "Improves an answer."}',
        'steps:',
        '  refine:',
        '    call: while',
        '    condition: ${ input.iteration < 3 }',
        '    max_iterations: 5',
        '    output: refined',
        '    do:',
        '      improve:',
        '        call: agent',
        '        agent: thinker',
        '        input_template: "Improve it"',
        '  final:',
        '    call: agent',
        '    agent: thinker',
        '    input_template: "Final: ${ steps.refine.output }"',
        '',
      ].join('\n'),
    );
    const r = await run(['graph', f, '--json'], dir);
    expect(r.code, r.err).toBe(0);
    const g = JSON.parse(r.out);
    expect(g.nodes).toEqual([
      { handle: 'refine', kind: 'while', tools: [], output: 'refined' },
      { handle: 'improve', kind: 'agent', tools: [], output: 'improve', parent: 'refine' },
      { handle: 'final', kind: 'agent', tools: [], output: 'final' },
    ]);
    // Keys in the documented order: output before parent.
    expect(Object.keys(g.nodes[1])).toEqual(['handle', 'kind', 'tools', 'output', 'parent']);
    const t = await run(['graph', f], dir);
    expect(t.out).toContain('refine   while  -> refined\n');
    expect(t.out).toContain('improve  agent  (in refine)\n');
    expect(g.edges).toEqual([[0, 2]]);
    const m = await run(['graph', f, '--format', 'mermaid'], dir);
    expect(m.out).toContain('  subgraph s0["refine"]\n    n1("improve<br/>(agent)")\n  end\n');
    const v = await run(['validate', f], dir);
    expect([v.code, v.out]).toEqual([0, 'ok\n']);
  });

  it('exits 2 on usage errors', async () => {
    expect((await run(['graph'], dir)).code).toBe(2);
    expect((await run(['graph', 'a', 'b'], dir)).code).toBe(2);
    expect((await run(['graph', 'good.chain.yaml', '--format', 'png'], dir)).code).toBe(2);
    expect((await run(['graph', 'good.chain.yaml', '--json', '--format', 'dot'], dir)).code).toBe(2);
    expect((await run(['graph', 'good.chain.yaml', '--expr', 'a'], dir)).code).toBe(2);
    const r = await run(['graph', 'good.chain.yaml', '--colour'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error[usage] Unknown option '--colour'");
  });

  it('reports a missing file as an io error (exit 1)', async () => {
    const r = await run(['graph', 'missing.yaml', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'io', message: "cannot read 'missing.yaml': no such file" });
  });
});

describe('Function: main (stepforge validate)', () => {
  it('warns about a DSL document without document.version, and does not fail it with --strict', async () => {
    write('noversion.yaml', 'document:\n  dsl: "1.0"\n  name: nv\nagents: { a: {} }\nsteps:\n  s: { call: agent, agent: a }\n');
    for (const argv of [
      ['validate', 'noversion.yaml'],
      ['validate', 'noversion.yaml', '--strict'],
    ]) {
      const r = await run(argv, dir);
      expect([argv, r.code, r.out]).toEqual([argv, 0, 'ok\n']);
      expect(r.err).toContain(
        'warning[missing_version] noversion.yaml:2:3: document has no version; GraphN requires document.version (e.g. version: "0.1.0")',
      );
    }
  });

  it('prints ok, exits 0 and warns about unused tasks on stderr', async () => {
    const r = await run(['validate', 'good.chain.yaml'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toBe('ok\n');
    expect(r.err).toContain("warning[unused_task] good.chain.yaml:7:3: task 'spare' is defined but not used in the chain");
  });

  it('with --json reports ok and the warnings as data', async () => {
    const r = await run(['validate', 'good.chain.yaml', '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      ok: true,
      format: 'chain',
      warnings: [{ class: 'unused_task', message: "task 'spare' is defined but not used in the chain", line: 7, column: 3 }],
    });
  });

  it('with --strict fails on a warning', async () => {
    const r = await run(['validate', 'good.chain.yaml', '--strict', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'unused_task', line: 7, column: 3 });
  });

  it('applies the tier check that graph skips', async () => {
    const r = await run(['validate', 'notools.chain.yaml', '--json'], dir);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.out);
    expect(out.error.class).toBe('tier_limit');
    expect(out.error.message).toMatch(/^the standard tier needs at least 1 model step\(s\) granted a tool, found 0/);
    // And the task check: b has no prompt.
    expect(out.errors.map((e: { class: string }) => e.class)).toEqual(['tier_limit', 'invalid_task']);
    expect(out.errors[1]).toMatchObject({ message: 'tasks.b.prompt: missing required field; expected a string', line: 4, column: 3 });
  });

  it('prints every error with a caret excerpt and exits 1', async () => {
    const f = write('bad.chain.yaml', 'chain: "a@web > b > a"\ntasks:\n  a: {kind: model, prompt: x}\n  b: {kind: tool, tool: fetch}\n');
    const r = await run(['validate', f], dir);
    expect(r.code).toBe(1);
    expect(r.err).toBe('error[cycle] bad.chain.yaml:1:19: cycle: a > b > a\n  |\n1 | chain: "a@web > b > a"\n  |                   ^\n');
  });

  it('runs the checks compile runs on the state machine too: a state name over 80 characters, history over the quota', async () => {
    const long = 'h'.repeat(100);
    const named = await run(
      ['validate', write('long.chain.yaml', `chain: "${long}@web"\ntasks:\n  ${long}: { kind: model, prompt: x }\n`), '--json'],
      dir,
    );
    expect(named.code).toBe(1);
    expect(JSON.parse(named.out).error).toMatchObject({ class: 'state_name', line: 1, column: 9 });
    const loop = write(
      'long-loop.yaml',
      'document: {dsl: "1.0", name: long-loop}\nagents: {w: {}}\nsteps:\n  l: {call: while, condition: "${ true }", max_iterations: 100000, do: {a: {call: agent, agent: w, input_template: x}}}\n',
    );
    const history = await run(['validate', loop], dir);
    expect(history.code).toBe(1);
    expect(history.err).toMatch(/^error\[history_limit\] long-loop\.yaml:4:/);
  });

  it('gives a usage error with --json its usage as a field, and a located error its hint', async () => {
    const usage = await run(['graph', 'good.chain.yaml', '--json', '--format', 'dot'], dir);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.out)).toEqual({
      error: {
        class: 'usage',
        message: '--json conflicts with --format dot',
        line: null,
        column: null,
        usage: expect.stringMatching(/^stepforge graph /),
      },
    });
    const hinted = await run(
      [
        'validate',
        write(
          'typo.yaml',
          'document: {dsl: "1.0", name: typo}\nagents: {writer: {}}\nsteps:\n  a: {call: agent, agent: writr, input_template: x}\n',
        ),
        '--json',
      ],
      dir,
    );
    expect(JSON.parse(hinted.out).error).toEqual({
      class: 'unknown_agent',
      message: "unknown agent 'writr'",
      line: 4,
      column: 27,
      file: 'typo.yaml',
      hint: "did you mean 'writer'?",
    });
  });

  it('refuses a value option given twice rather than keep the last one (exit 2)', async () => {
    for (const argv of [
      ['compile', 'good.chain.yaml', '-o', 'a', '-o', 'b'],
      ['graph', 'good.chain.yaml', '--format', 'dot', '--format', 'mermaid'],
      ['run', 'good.chain.yaml', '--input', '{}', '--input', '{"topic":"x"}'],
    ]) {
      const r = await run(argv, dir);
      expect([r.code, r.err.split('\n')[0]]).toEqual([
        2,
        `error[usage] ${argv.includes('-o') ? '-o' : argv.includes('--format') ? '--format' : '--input'} is given more than once: give it once`,
      ]);
    }
    expect((await run(['validate', 'good.chain.yaml', '--json', '--json'], dir)).code).toBe(0);
  });

  it('exits 2 without a file', async () => {
    const r = await run(['validate'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error[usage] missing FILE');
  });

  it('rejects a document that is neither a chain nor a DSL document', async () => {
    const r = await run(['validate', write('other.yaml', 'hello: world\n'), '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'invalid_document', line: 1, column: 1 });
  });
});

describe('Function: main (stepforge new)', () => {
  it('prints a swarm document that validates', async () => {
    const r = await run(['new', 'swarm', '--agents', '2'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain('chain: "[agent_1@web-search & agent_2@web-search] > gather"');
  });

  it('writes every shape to a file that validate accepts', async () => {
    for (const [shape, ...opts] of [
      ['swarm'],
      ['supervisor'],
      ['consensus'],
      ['consensus', '--mode', 'majority'],
      ['review-loop', '--rounds', '3'],
      ['map-reduce'],
      ['fan-out', '--branches', 'pros,cons'],
    ]) {
      const file = `shapes/${shape}${opts.length}.chain.yaml`;
      const w = await run(['new', shape!, ...opts, '-o', file], dir);
      expect(w.code, w.err).toBe(0);
      expect(w.out).toMatch(new RegExp(`^wrote ${file} \\(${shape}: `));
      const v = await run(['validate', file], dir);
      expect([v.code, v.out, v.err]).toEqual([0, 'ok\n', '']);
    }
    expect(readFileSync(join(dir, 'shapes/review-loop2.chain.yaml'), 'utf8')).toContain(
      'chain: worker@web-search > review_1 > revise_1 > review_2 > revise_2 > review_3 > revise_3',
    );
    // The consensus judge is marked as one; the majority tally is a pure step.
    expect(readFileSync(join(dir, 'shapes/consensus0.chain.yaml'), 'utf8')).toMatch(
      /\n  judge:\n    kind: model\n    prompt: [^]*\n    select: verbatim\n/,
    );
    expect(readFileSync(join(dir, 'shapes/consensus2.chain.yaml'), 'utf8')).not.toContain('select:');
  });

  it('writes, for every count map-reduce and a majority consensus accept, a document validate accepts; past that, a usage error says why and nothing is written', async () => {
    for (const [shape, ...opts] of [['map-reduce'], ['consensus', '--mode', 'majority']]) {
      for (let n = 1; n <= 3; n++) {
        const file = `limits/${shape}-${opts.length}-${n}.chain.yaml`;
        const w = await run(['new', shape!, ...opts, '--count', String(n), '-o', file], dir);
        expect(w.code, w.err).toBe(0);
        const v = await run(['validate', file], dir);
        expect([n, v.code, v.out, v.err]).toEqual([n, 0, 'ok\n', '']);
      }
      const file = `limits/${shape}-${opts.length}-4.chain.yaml`;
      const over = await run(['new', shape!, ...opts, '--count', '4', '-o', file], dir);
      expect(over.code).toBe(2);
      const [option, step] = shape === 'map-reduce' ? ['mappers', 'reduce'] : ['voters', 'tally'];
      expect(over.err).toContain(
        `${shape}: option '${option}': at most 3, got 4: the pure '${step}' step reads every output in the state machine`,
      );
      expect(over.err).toContain("may exceed Step Functions' 256 KiB payload, so the document would not compile");
      expect(existsSync(join(dir, file))).toBe(false);
    }
  });

  it('writes every shape at the limits of its size option to a document validate accepts, or refuses it and writes nothing', async () => {
    const limits: [string, string[], number[]][] = [
      ['swarm', [], [1, 8]],
      ['supervisor', [], [1, 8]],
      ['consensus', [], [1, 8]],
      ['consensus', ['--mode', 'majority'], [1, 3]],
      ['review-loop', [], [1, 32]],
      ['map-reduce', [], [1, 3]],
      ['fan-out', [], [1, 8]],
    ];
    for (const [shape, opts, counts] of limits) {
      for (const n of counts) {
        const file = `edges/${shape}-${opts.length}-${n}.chain.yaml`;
        const w = await run(['new', shape, ...opts, '--count', String(n), '-o', file], dir);
        expect([shape, n, w.code, w.err]).toEqual([shape, n, 0, '']);
        const v = await run(['validate', file], dir);
        expect([shape, n, v.code, v.out, v.err]).toEqual([shape, n, 0, 'ok\n', '']);
      }
      // One past the largest: refused (a usage error or the compiler's own), and no file.
      const past = counts[1]! + 1;
      const file = `edges/${shape}-${opts.length}-${past}.chain.yaml`;
      const w = await run(['new', shape, ...opts, '--count', String(past), '-o', file], dir);
      expect([shape, past, w.code === 0]).toEqual([shape, past, false]);
      expect(existsSync(join(dir, file))).toBe(false);
    }
  });

  it('refuses to overwrite without --force', async () => {
    expect((await run(['new', 'swarm', '-o', 'once.yaml'], dir)).code).toBe(0);
    const again = await run(['new', 'swarm', '-o', 'once.yaml'], dir);
    expect(again.code).toBe(2);
    expect(again.err).toContain("'once.yaml' already exists; pass --force to overwrite it");
    expect((await run(['new', 'supervisor', '-o', 'once.yaml', '--force'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'once.yaml'), 'utf8')).toContain('planner >');
  });

  it('reports a shape over the tier limit as a tier_limit error and writes nothing', async () => {
    const r = await run(['new', 'swarm', '--agents', '9', '-o', 'big.yaml', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'tier_limit',
      message: "the standard tier allows at most 8 model steps granted tools, found 9 ('agent_9' is number 9)",
    });
    expect(existsSync(join(dir, 'big.yaml'))).toBe(false);
  });

  it('exits 2 for an unknown shape, a foreign size option or a bad count', async () => {
    expect((await run(['new', 'pyramid'], dir)).err).toContain("unknown shape 'pyramid'");
    expect((await run(['new', 'swarm', '--workers', '3'], dir)).code).toBe(2);
    expect((await run(['new', 'swarm', '--agents', 'many'], dir)).code).toBe(2);
    expect((await run(['new', 'swarm', '--agents', '0'], dir)).code).toBe(2);
    expect((await run(['new', 'swarm', '--mode', 'majority'], dir)).code).toBe(2);
    expect((await run(['new'], dir)).code).toBe(2);
  });
});

describe('Function: main (COMMAND --help)', () => {
  it("prints the command's usage and summary on stdout and exits 0, running nothing", async () => {
    // `serve` and `runs` would open the embedded stack if they ran: nothing is opened here.
    for (const [name, usage] of [
      ['run', 'run FILE|--chain FILE [--input JSON|@file|-]'],
      ['runs', 'runs list [--workflow W]'],
      ['serve', 'serve'],
      ['approvals', 'approvals list'],
    ] as const) {
      const r = await run([name, '--help'], dir);
      expect({ name, code: r.code, err: r.err }).toEqual({ name, code: 0, err: '' });
      expect(r.out.startsWith(`Usage: stepforge ${usage}`)).toBe(true);
    }
    expect(existsSync(join(dir, '.stepforge'))).toBe(false);
    const after = await run(['runs', 'show', 'some-id', '-h'], dir);
    expect(after.code).toBe(0);
    expect(after.out).toMatch(
      /^Usage: stepforge runs list .*\n\nList runs, show one, retry its unfinished steps, restart it from a step, cancel it, or record a step's outcome by hand\.\n$/,
    );
  });

  it("prints a command's own longer help where it has one", async () => {
    const r = await run(['asl', '--help'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Runs a raw ASL definition in the embedded engine');
  });
});

describe('Function: main (run and runs: usage checked before the stack opens)', () => {
  it('refuses a --limit that is not a whole number from 1 to 10000, and --limit outside list', async () => {
    for (const bad of ['abc', '0', '-1', '2.5', '10001', '']) {
      const r = await run(['runs', 'list', `--limit=${bad}`], dir);
      expect({ bad, code: r.code, err: r.err.split('\n')[0] }).toEqual({
        bad,
        code: 2,
        err: `error[usage] --limit must be a whole number from 1 to 10000, got '${bad}'`,
      });
    }
    for (const [key, message] of [
      ['', 'an idempotency key cannot be empty'],
      ['k'.repeat(3000), 'an idempotency key is at most 256 characters, got 3000'],
    ]) {
      const r = await run(['run', 'wf.yaml', '--idempotency-key', key!], dir);
      expect({ code: r.code, err: r.err.split('\n')[0] }).toEqual({ code: 2, err: `error[usage] --idempotency-key: ${message}` });
    }
    const show = await run(['runs', 'show', 'some-id', '--limit', '3'], dir);
    expect({ code: show.code, err: show.err.split('\n')[0] }).toEqual({ code: 2, err: 'error[usage] --limit goes with runs list' });
    expect(existsSync(join(dir, '.stepforge'))).toBe(false);
  });
});
