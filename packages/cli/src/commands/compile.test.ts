import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../CliIo.js';
import compile from './compile.js';

function io(cwd: string): CliIo & { stdout: string; stderr: string } {
  const o = {
    stdout: '',
    stderr: '',
    out(t: string) {
      o.stdout += t;
    },
    err(t: string) {
      o.stderr += t;
    },
    isTTY: false,
    cwd,
    env: {},
  };
  return o;
}

const N_SHAPE = `chain: "a@search > c | [a & b] > d"
tasks:
  a: { kind: model, prompt: "A" }
  b: { kind: tool, tool: clock }
  c: { kind: model, prompt: "C" }
  d: { kind: model, prompt: "D" }
`;

describe('Command: compile', () => {
  it('writes <name>.asl.json and <name>.manifest.json into -o DIR and explains the added edges', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-'));
    writeFileSync(join(dir, 'n-shape.chain.yaml'), N_SHAPE);
    const o = io(dir);
    expect(await compile.run(['n-shape.chain.yaml', '-o', 'out', '--explain'], o)).toBe(0);
    const asl = JSON.parse(readFileSync(join(dir, 'out', 'n-shape.asl.json'), 'utf8'));
    expect(asl.QueryLanguage).toBe('JSONata');
    expect(asl.StartAt).toBe('Start');
    const manifest = JSON.parse(readFileSync(join(dir, 'out', 'n-shape.manifest.json'), 'utf8'));
    expect(manifest.steps.map((s: { id: string }) => s.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(o.stdout).toContain('synchronisation edges added: 1');
    expect(o.stdout).toContain('    b -> c');
    expect(o.stdout).toContain('estimated slowdown: 1.000x');
  });

  it('prints {"name","files","explain"} with --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-'));
    writeFileSync(join(dir, 'n.chain.yaml'), N_SHAPE);
    const o = io(dir);
    expect(await compile.run(['n.chain.yaml', '--json'], o)).toBe(0);
    const out = JSON.parse(o.stdout);
    expect(out.name).toBe('n');
    expect(out.explain.addedEdges).toEqual([['b', 'c']]);
    expect(JSON.parse(readFileSync(join(dir, 'n.manifest.json'), 'utf8')).type).toBe('STANDARD');
  });

  it('reports an invalid document as error[class] FILE:LINE:COL and exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-'));
    writeFileSync(join(dir, 'bad.chain.yaml'), 'chain: "a > zz"\ntasks:\n  a: { kind: model, prompt: "A" }\n');
    const o = io(dir);
    expect(await compile.run(['bad.chain.yaml', '--json'], o)).toBe(1);
    expect(JSON.parse(o.stdout).error).toMatchObject({ class: 'unknown_handle', line: 1 });
  });

  it('prints every error of a document, as validate does: {"error", "errors"} with --json, each located in text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-'));
    writeFileSync(join(dir, 'two.chain.yaml'), 'chain: "a > zz > yy"\ntasks:\n  a: { kind: model, prompt: "A" }\n');
    const o = io(dir);
    expect(await compile.run(['two.chain.yaml', '--json'], o)).toBe(1);
    const out = JSON.parse(o.stdout);
    expect(
      out.errors.map((e: { class: string; message: string; line: number; column: number }) => [e.class, e.message, e.line, e.column]),
    ).toEqual([
      ['unknown_handle', "unknown task handle 'zz'; define it under tasks:", 1, 13],
      ['unknown_handle', "unknown task handle 'yy'; define it under tasks:", 1, 18],
    ]);
    expect(out.error).toEqual(out.errors[0]);
    const text = io(dir);
    expect(await compile.run(['two.chain.yaml'], text)).toBe(1);
    expect(text.stderr.match(/^error\[.*$/gm)).toEqual([
      "error[unknown_handle] two.chain.yaml:1:13: unknown task handle 'zz'; define it under tasks:",
      "error[unknown_handle] two.chain.yaml:1:18: unknown task handle 'yy'; define it under tasks:",
    ]);
    // One error has the same shape: errors holds it alone.
    const one = io(dir);
    writeFileSync(join(dir, 'one.chain.yaml'), 'chain: "a > zz"\ntasks:\n  a: { kind: model, prompt: "A" }\n');
    expect(await compile.run(['one.chain.yaml', '--json'], one)).toBe(1);
    expect(JSON.parse(one.stdout).errors).toEqual([JSON.parse(one.stdout).error]);
  });

  it('exits 2 on a usage error', async () => {
    const o = io(tmpdir());
    expect(await compile.run([], o)).toBe(2);
    expect(o.stderr).toMatch(/^error\[usage\] expected exactly one FILE/);
  });
  describe('an -o directory that cannot be had is error[io], exit 1, and writes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-o-'));
    writeFileSync(join(dir, 'n.chain.yaml'), N_SHAPE);
    writeFileSync(join(dir, 'taken'), 'a file\n');
    mkdirSync(join(dir, 'holes', 'n-shape.asl.json'), { recursive: true });
    const HINT = '  = help: -o names the directory the two files are written to: give one you can write to\n';
    it.each([
      [
        'a file',
        'taken',
        `error[io] the output directory ${join(dir, 'taken')} cannot be created: ${join(dir, 'taken')} is a file, not a directory\n`,
      ],
      [
        'a file above it',
        'taken/sub',
        `error[io] the output directory ${join(dir, 'taken', 'sub')} cannot be created: ${join(dir, 'taken')} is a file, not a directory\n`,
      ],
      // Node's recursive mkdir never returns here (ENOENT under /proc, EEXIST above it).
      [
        'under /proc',
        '/proc/stepforge-nope',
        'error[io] the output directory /proc/stepforge-nope cannot be created: the file system does not allow a directory there (at /proc/stepforge-nope)\n',
      ],
    ])('%s', async (_what, out, message) => {
      const o = io(dir);
      expect(await compile.run(['n.chain.yaml', '-o', out], o)).toBe(1);
      expect([o.stdout, o.stderr]).toEqual(['', message + HINT]);
    });
    it('a directory where a file is to be written', async () => {
      writeFileSync(join(dir, 'holes.chain.yaml'), `name: n-shape\n${N_SHAPE}`);
      const o = io(dir);
      expect(await compile.run(['holes.chain.yaml', '-o', 'holes', '--json'], o)).toBe(1);
      expect(JSON.parse(o.stdout).error).toMatchObject({
        class: 'io',
        message: `cannot write ${join(dir, 'holes', 'n-shape.asl.json')}: a directory has that name`,
      });
    });
  });
  it('refuses --express for a workflow that waits for a task token (express_unsupported), and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-compile-x-'));
    writeFileSync(
      join(dir, 'gate.chain.yaml'),
      'name: gate\nchain: "a@web-search > t"\ntasks:\n  a: { kind: model, prompt: "A" }\n  t: { kind: tool, tool: shell, args: { command: "echo hi" } }\n',
    );
    const o = io(dir);
    expect(await compile.run(['gate.chain.yaml', '--express', '-o', 'out', '--json'], o)).toBe(1);
    expect(JSON.parse(o.stdout).error).toMatchObject({
      class: 'express_unsupported',
      message:
        "workflow 'gate' cannot run as an Express workflow: its tool calls wait for a task token (so that policy can gate them for a human), which Express workflows do not support",
    });
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});
