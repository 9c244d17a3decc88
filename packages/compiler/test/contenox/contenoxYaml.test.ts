// Contenox chains written in YAML may use anchors, aliases and tags; what a chain cannot use is named
// at the alias or tag (as the chain and DSL loaders do), never an internal error.
import { describe, expect, it, vi } from 'vitest';
import { compileDocument, loadDocument } from '../../src/index.js';

const first = (text: string, options: { vars?: Record<string, string> } = {}) => {
  const r = loadDocument(text, { file: 'c.yaml', ...options });
  const e = r.errors[0];
  return { format: r.format, code: e?.code, message: e?.message, at: e ? `${e.location!.line}:${e.location!.column}` : undefined };
};

const task = (extra: string) => `id: y\ntasks:\n  - id: a\n    handler: noop\n${extra}`;

describe('Function: loadDocument (Contenox chains in YAML)', () => {
  it("names an alias inside its own anchor's value at the alias", () => {
    const text = task('    transition: &a\n      on_failure: *a\n      branches: [ { operator: default, goto: end } ]\n');
    expect(first(text)).toEqual({
      format: 'contenox',
      code: 'invalid_document',
      at: '6:19',
      message: "alias '*a' is inside the value its anchor '&a' marks, so that value would contain itself; write the inner value out",
    });
    expect(() => compileDocument(text, { file: 'c.yaml' })).toThrow(expect.objectContaining({ code: 'invalid_document' }));
  });

  it('names an alias without its anchor at the alias, not at 1:1', () => {
    expect(first(task('    transition:\n      branches:\n        - operator: default\n          goto: *e\n'))).toMatchObject({
      format: 'contenox',
      code: 'invalid_document',
      at: '8:17',
      message: expect.stringMatching(/^alias '\*e' has no anchor/),
    });
    expect(first('tasks:\n  - id: a\n    handler: *nope\n')).toMatchObject({ format: 'contenox', code: 'invalid_document', at: '3:14' });
  });

  it('names !!binary, !!timestamp and local tags as outside plain data', () => {
    expect(first(task('    system_instruction: !!binary aGk=\n'))).toMatchObject({
      format: 'contenox',
      code: 'invalid_document',
      at: '5:25',
      message: expect.stringMatching(/^YAML tag '!!binary' is not supported: a workflow document holds plain data/),
    });
    const r = loadDocument(
      task('    system_instruction: !!timestamp 2020-01-01\n    transition: { branches: [ { operator: !foo default, goto: end } ] }\n'),
      { file: 'c.yaml' },
    );
    expect(r.errors.map((e) => `${e.code} ${e.location!.line}:${e.location!.column} ${e.message.split(' is not supported')[0]}`)).toEqual([
      "invalid_document 5:25 YAML tag '!!timestamp'",
      "invalid_document 6:43 YAML tag '!foo'",
    ]);
  });

  it('reports branches written as a mapping when a macro is unfilled (the fast path declines)', () => {
    const text =
      'id: y\ntasks:\n  - id: a\n    handler: chat_completion\n    execute_config: { model: "{{var:model}}" }\n    transition:\n      branches:\n          when: ""\n          goto: end\n';
    expect(first(text)).toEqual({
      format: 'contenox',
      code: 'invalid_document',
      at: '8:11',
      message: '`transition.branches` must be a list',
    });
  });

  it('names aliases that expand too far at the first alias', () => {
    const laughs = [
      'l0: &l0 [x, x, x, x, x, x, x, x, x, x]',
      ...[1, 2, 3, 4, 5].map(
        (i) =>
          `l${i}: &l${i} [${Array(10)
            .fill(`*l${i - 1}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    expect(first(`${laughs}\n${task('    transition: { branches: [ { operator: default, goto: end } ] }\n')}`)).toMatchObject({
      format: 'contenox',
      code: 'invalid_document',
      at: '2:10',
      message: expect.stringMatching(/^the aliases in this document expand to too many values/),
    });
  });

  it('still loads a chain that repeats a value through an alias', () => {
    const text =
      'id: y\ntasks:\n  - id: a\n    handler: noop\n    transition: &end { branches: [ { operator: default, goto: end } ] }\n  - id: b\n    handler: noop\n    transition: *end\n';
    expect(loadDocument(text, { file: 'c.yaml' }).errors).toEqual([]);
  });

  it('names a tagged key without the yaml package printing a process warning', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    try {
      const text = task('    transition: { branches: [ { operator: default, goto: end } ] }\n    !!binary aGk=: x\n');
      expect(first(text)).toMatchObject({
        format: 'contenox',
        code: 'invalid_document',
        at: '6:5',
        message: expect.stringMatching(/^YAML tag '!!binary' is not supported/),
      });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('names a tag in a chain whose tasks repeat one through an alias', () => {
    const text = 'id: y\ntasks:\n  - &t\n    id: a\n    handler: noop\n    system_instruction: !!binary aGk=\n  - *t\n';
    expect(first(text)).toMatchObject({ format: 'contenox', code: 'invalid_document', at: '6:25' });
  });
});
