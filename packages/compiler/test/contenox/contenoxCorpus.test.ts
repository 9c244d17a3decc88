// Our own corpus of Contenox task chains: valid ones compile to ASL that asl-validator accepts (with
// the Choice states their transitions become), invalid ones are refused with the named class at the
// line and column of the offending field.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument } from '../../src/index.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };

const end = '"transition": {"branches": [{"operator": "default", "goto": "end"}]}';
const chain = (...tasks: string[]) => `{\n"id": "c",\n"tasks": [\n${tasks.join(',\n')}\n]\n}\n`;

interface Valid {
  readonly name: string;
  readonly text: string;
  readonly vars?: Record<string, string>;
  readonly states?: readonly string[];
}
const VALID: Valid[] = [
  {
    // Contenox tries a default only after every other branch, so a bound written after it still ends the loop.
    name: 'bound after default',
    text: chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "a"}, {"operator": "edge_traversed_at_least", "edge": "a->a", "when": "2", "goto": "end"}]}}`,
    ),
    states: ['a', 'a: route'],
  },
  { name: 'chat_completion', text: chain(`{"id": "a", "handler": "chat_completion", "system_instruction": "Be brief.", ${end}}`) },
  {
    name: 'route with equals',
    text: chain(
      `{"id": "r", "handler": "route", "transition": {"branches": [{"operator": "equals", "when": "code", "goto": "x"}, {"operator": "default", "goto": "y"}]}}`,
      `{"id": "x", "handler": "noop", ${end}}`,
      `{"id": "y", "handler": "noop", ${end}}`,
    ),
    states: ['r', 'r: route', 'x', 'y'],
  },
  {
    name: 'contains',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "transition": {"branches": [{"operator": "contains", "when": "exec", "goto": "end"}, {"operator": "default", "goto": "end"}]}}`,
    ),
  },
  {
    name: 'starts_with',
    text: chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "starts_with", "when": "no", "goto": "b"}]}}`,
      `{"id": "b", "handler": "noop", ${end}}`,
    ),
  },
  {
    name: 'ends_with',
    text: chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "ends_with", "when": "op", "goto": "b"}]}}`,
      `{"id": "b", "handler": "noop", ${end}}`,
    ),
  },
  { name: 'noop', text: chain(`{"id": "a", "handler": "noop", ${end}}`) },
  { name: 'execute_tool_calls', text: chain(`{"id": "a", "handler": "execute_tool_calls", "input_var": "input", ${end}}`) },
  {
    name: 'tools handler',
    text: chain(`{"id": "t", "handler": "tools", "tools": {"name": "local_fs", "tool_name": "list_dir", "args": {"path": "."}}, ${end}}`),
  },
  {
    name: 'raise_error',
    text: chain(`{"id": "a", "handler": "raise_error", "prompt_template": "bad input"}`),
    states: ['a', 'a: raise_error'],
  },
  {
    name: 'on_failure',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "transition": {"on_failure": "h", "branches": [{"operator": "default", "goto": "end"}]}}`,
      `{"id": "h", "handler": "noop", ${end}}`,
    ),
  },
  {
    name: 'bounded cycle',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "execute_config": {"tools": ["local_shell"]}, "transition": {"branches": [{"operator": "edge_traversed_at_least", "edge": "a->b", "when": "3", "goto": "end"}, {"operator": "default", "goto": "b"}]}}`,
      `{"id": "b", "handler": "execute_tool_calls", "input_var": "a", "transition": {"branches": [{"operator": "default", "goto": "a"}]}}`,
    ),
  },
  {
    name: 'macro with default',
    text: chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"model": "{{var:model|llama3}}"}, ${end}}`),
  },
  {
    name: 'macro filled by vars',
    text: chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"model": "{{var:model}}", "provider": "local"}, ${end}}`),
    vars: { model: 'x' },
  },
  {
    name: 'per-task tools_policies',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "execute_config": {"tools": ["local_shell", "local_fs"], "tools_policies": {"local_shell": {"_allowed_commands": "ls,cat"}, "local_fs": {"_max_read_bytes": "1024"}}}, ${end}}`,
    ),
  },
  {
    name: 'retry_policy',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "execute_config": {"retry_policy": {"max_attempts": 4, "initial_backoff": "1s", "max_backoff": "30s", "jitter": 0.25}}, ${end}}`,
    ),
  },
  {
    name: 'retry_on_failure and timeout',
    text: chain(`{"id": "a", "handler": "chat_completion", "retry_on_failure": 2, "timeout": "1m30s", ${end}}`),
  },
  {
    name: 'prompt_template',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "prompt_template": "Review:\\n{{.input}}", "transition": {"branches": [{"operator": "default", "goto": "b"}]}}`,
      `{"id": "b", "handler": "chat_completion", "prompt_template": "Again: {{.a}}", ${end}}`,
    ),
  },
  {
    name: 'hide_tools',
    text: chain(
      `{"id": "a", "handler": "chat_completion", "execute_config": {"tools": ["local_fs", "local_shell"], "hide_tools": ["local_shell"]}, ${end}}`,
    ),
  },
  {
    name: 'unreachable task left out',
    text: chain(`{"id": "a", "handler": "noop", ${end}}`, `{"id": "b", "handler": "noop", ${end}}`),
    states: ['a'],
  },
  { name: 'no branches ends', text: chain(`{"id": "a", "handler": "noop"}`) },
  {
    name: 'YAML form',
    text: 'id: y\ntasks:\n  - id: a\n    handler: noop\n    transition:\n      branches:\n        - operator: default\n          goto: end\n',
  },
];

interface Invalid {
  readonly name: string;
  readonly text: string;
  readonly code: string;
  readonly line: number;
  readonly at: string;
  readonly requireMacros?: boolean;
}
const INVALID: Invalid[] = [
  { name: 'unknown handler', text: chain(`{"id": "a", "handler": "chat", ${end}}`), code: 'unknown_handler', line: 4, at: '"chat"' },
  {
    name: 'unknown operator',
    text: chain(`{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "matches", "goto": "end"}]}}`),
    code: 'unknown_operator',
    line: 4,
    at: '"matches"',
  },
  {
    name: 'dangling goto',
    text: chain(`{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "nowhere"}]}}`),
    code: 'dangling_goto',
    line: 4,
    at: '"nowhere"',
  },
  {
    name: 'duplicate task id',
    text: chain(`{"id": "a", "handler": "noop", ${end}}`, `{"id": "a", "handler": "noop", ${end}}`),
    code: 'duplicate_task_id',
    line: 5,
    at: '"a"',
  },
  {
    name: 'unbounded cycle',
    text: chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "b"}]}}`,
      `{"id": "b", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "a"}]}}`,
    ),
    code: 'unbounded_cycle',
    line: 4,
    at: '{"id": "a"',
  },
  {
    name: 'unbounded self-loop',
    text: chain(`{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "equals", "when": "noop", "goto": "a"}]}}`),
    code: 'unbounded_cycle',
    line: 4,
    at: '{"id": "a"',
  },
  {
    name: 'unfilled macro',
    text: chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"model": "m-{{var:model}}"}, ${end}}`),
    code: 'unfilled_macro',
    line: 4,
    at: '{{var:model}}',
    requireMacros: true,
  },
  {
    name: 'unknown tool',
    text: chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"tools": ["local_shel"]}, ${end}}`),
    code: 'unknown_tool',
    line: 4,
    at: '"local_shel"',
  },
  {
    name: 'unknown tool set in a tools task',
    text: chain(`{"id": "a", "handler": "tools", "tools": {"name": "slack", "tool_name": "post"}, ${end}}`),
    code: 'unknown_tool',
    line: 4,
    at: '"slack"',
  },
  {
    name: 'host tool set at run time',
    text: chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"tools": ["oracle"]}, ${end}}`),
    code: 'unknown_tool',
    line: 4,
    at: '"oracle"',
    requireMacros: true,
  },
  {
    name: 'edge naming no task',
    text: chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "edge_traversed_at_least", "edge": "a->zz", "when": "2", "goto": "end"}]}}`,
    ),
    code: 'invalid_edge',
    line: 4,
    at: '"a->zz"',
  },
  {
    name: 'on_failure to no task',
    text: chain(`{"id": "a", "handler": "noop", "transition": {"on_failure": "gone", "branches": []}}`),
    code: 'dangling_goto',
    line: 4,
    at: '"gone"',
  },
];

describe('Function: compileDocument (Contenox corpus)', () => {
  it('has at least 30 chains', () => expect(VALID.length + INVALID.length).toBeGreaterThanOrEqual(30));
  for (const c of VALID) {
    it(`compiles ${c.name} to ASL that asl-validator accepts`, () => {
      const loaded = loadDocument(c.text, { file: 'c.json', ...(c.vars ? { vars: c.vars, requireMacros: true } : {}) });
      expect(loaded.errors.map(String)).toEqual([]);
      expect(loaded.format).toBe('contenox');
      const compiled = compileDocument(c.text, { file: 'c.json', ...(c.vars ? { vars: c.vars, requireMacros: true } : {}) });
      const v = aslValidator(structuredClone(compiled.asl));
      expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
      const states = compiled.asl.States as Record<string, { Type: string }>;
      for (const s of c.states ?? []) expect(Object.keys(states)).toContain(s);
      // Every transition is a Choice state (raise_error has none: it ends the run failed).
      if (c.name !== 'raise_error') expect(Object.values(states).some((s) => s.Type === 'Choice')).toBe(true);
    });
  }
  for (const c of INVALID) {
    it(`refuses ${c.name} with ${c.code} at its line and column`, () => {
      const loaded = loadDocument(c.text, { file: 'c.json', ...(c.requireMacros ? { requireMacros: true } : {}) });
      const e = loaded.errors[0];
      expect(e?.code).toBe(c.code);
      const column = c.text.split('\n')[c.line - 1]!.indexOf(c.at) + 1;
      expect(column).toBeGreaterThan(0);
      expect({ line: e!.location!.line, column: e!.location!.column, file: e!.location!.file }).toEqual({
        line: c.line,
        column,
        file: 'c.json',
      });
    });
  }
});

describe('Function: compileDocument (Contenox lowering)', () => {
  it('counts the bounded edge in a state-machine variable and ends the loop by it', () => {
    const compiled = compileDocument(VALID.find((c) => c.name === 'bounded cycle')!.text, { file: 'c.json' });
    const states = compiled.asl.States as Record<
      string,
      { Choices?: { Condition: string; Assign: Record<string, string>; Next?: string }[] }
    >;
    const route = states['a: route']!.Choices!;
    expect(route[0]!.Condition).toBe('{% $edge0to1 >= 3 %}');
    expect(route[1]!.Assign.edge0to1).toBe('{% $edge0to1 + 1 %}');
    // Back to the agent loop of `a` (its counters' init state, then `a` itself).
    expect(states['b: route']!.Choices![0]!.Next).toMatch(/^a(: start)?$/);
  });

  it("sends an on_failure task's errors to its handler through Catch", () => {
    const compiled = compileDocument(VALID.find((c) => c.name === 'on_failure')!.text, { file: 'c.json' });
    const a = (compiled.asl.States as Record<string, { Catch?: { Next: string }[] }>).a!;
    expect(a.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Assign: { prev: '{% $states.errorOutput %}' }, Next: 'h' }]);
  });
});
