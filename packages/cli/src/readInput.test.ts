import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInput } from './readInput.js';

describe('Function: readInput', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-input-'));
  mkdirSync(join(dir, 'folder'));
  writeFileSync(join(dir, 'bom.json'), '\uFEFF{"topic":"tides"}\n');
  const thrown = (raw: string) => {
    try {
      readInput(raw, dir);
    } catch (e) {
      return e as { name: string; code: string; message: string; hint?: string };
    }
    return undefined;
  };

  it('reads @FILE, relative to the directory, past a byte order mark', () => {
    expect(readInput('@bom.json', dir)).toEqual({ topic: 'tides' });
    expect(readInput(undefined, dir)).toEqual({});
  });

  it('names a missing file, a directory and an @ without a name', () => {
    expect(thrown('@nope.json')).toMatchObject({
      code: 'file_not_found',
      message: 'cannot read input file nope.json: no such file',
      hint: expect.stringContaining('--input @FILE'),
    });
    expect(thrown('@folder')).toMatchObject({ code: 'io', message: 'cannot read input file folder: it is a directory' });
    expect(thrown('@')).toMatchObject({ name: 'UsageError', message: '--input @ needs a file name after the @, e.g. --input @input.json' });
  });

  it('reads standard input for - and for @- (not a file named "-")', () => {
    expect(readInput('-', dir, () => '{"topic":"piped"}\n')).toEqual({ topic: 'piped' });
    expect(readInput('@-', dir, () => '\uFEFF{"topic":"piped"}')).toEqual({ topic: 'piped' });
  });

  it('locates a syntax error in standard input, and names standard input that cannot be read', () => {
    let e: unknown;
    try {
      readInput('@-', dir, () => '{"a": }');
    } catch (x) {
      e = x;
    }
    expect(e).toMatchObject({ code: 'invalid_input_json', location: { file: '<stdin>', line: 1, column: 7 } });
    const unreadable = (() => {
      try {
        readInput('-', dir, () => {
          throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
        });
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(unreadable).toMatchObject({
      code: 'io',
      message: expect.stringMatching(/^cannot read --input from standard input: /),
      hint: expect.stringContaining('--input -'),
    });
    expect(thrown('-')).toMatchObject({
      code: 'io',
      message: 'cannot read --input from standard input: this command was given no standard input',
    });
  });

  it('takes text that is not JSON as the input text, inline, from a file and from standard input', () => {
    writeFileSync(join(dir, 'question.txt'), 'What changed in the diff?\n');
    expect(readInput('summarise the tide tables', dir)).toEqual({ input: 'summarise the tide tables' });
    expect(readInput('@question.txt', dir)).toEqual({ input: 'What changed in the diff?\n' });
    expect(readInput('-', dir, () => 'diff --git a/x b/x\n')).toEqual({ input: 'diff --git a/x b/x\n' });
    // Text that starts like JSON and breaks is a mistake, not text.
    expect(thrown('{"topic": tides}')).toMatchObject({ code: 'invalid_input_json', location: { file: '--input', line: 1, column: 11 } });
  });

  it('locates a JSON syntax error in the text', () => {
    expect(thrown('{"a": }')).toMatchObject({ code: 'invalid_input_json', location: { file: '--input', line: 1, column: 7 } });
  });
});
