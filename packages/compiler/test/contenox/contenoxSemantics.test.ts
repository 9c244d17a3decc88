// Contenox semantics that its own engine defines and its users rely on: a `default` branch is the last
// resort wherever it is written, a raised error goes to on_failure like any other failure, and a
// macro's fallback may name another variable.
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument } from '../../src/index.js';

const end = '"transition": {"branches": [{"operator": "default", "goto": "end"}]}';
const chain = (...tasks: string[]) => `{\n"id": "c",\n"tasks": [\n${tasks.join(',\n')}\n]\n}\n`;
type Choice = { Condition: string; Next?: string; Assign: Record<string, string> };
type States = Record<string, { Type: string; Choices?: Choice[]; Next?: string; Assign?: Record<string, string>; Catch?: unknown }>;

describe('Function: compileDocument (Contenox transitions)', () => {
  it('tries a default written first only after every other branch', () => {
    const text = chain(
      `{"id": "check", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "fallback"}, {"operator": "equals", "when": "noop", "goto": "matched"}]}}`,
      `{"id": "matched", "handler": "noop", ${end}}`,
      `{"id": "fallback", "handler": "noop", ${end}}`,
    );
    const states = compileDocument(text, { file: 'c.json' }).asl.States as States;
    const rules = states['check: route']!.Choices!;
    expect(rules.map((r) => r.Next)).toEqual(['matched', 'fallback']);
    expect(rules[1]!.Condition).toBe('{% true %}');
  });

  it('sends a raise_error with on_failure to its handler, the error as its input', () => {
    const text = chain(
      `{"id": "boom", "handler": "raise_error", "transition": {"on_failure": "recover", "branches": [{"operator": "default", "goto": "end"}]}}`,
      `{"id": "recover", "handler": "noop", ${end}}`,
    );
    const states = compileDocument(text, { file: 'c.json' }).asl.States as States;
    const raised = states['boom: raise_error']!;
    expect(raised.Type).toBe('Pass');
    expect(raised.Next).toBe('recover');
    expect(raised.Assign!.prev).toBe('{% {"Error": "ContenoxRaiseError", "Cause": $string($s_boom)} %}');
    expect(Object.values(states).some((s) => s.Type === 'Fail')).toBe(false);
  });

  it('still ends the run failed on a raise_error without on_failure', () => {
    const states = compileDocument(chain(`{"id": "boom", "handler": "raise_error", ${end}}`), { file: 'c.json' }).asl.States as States;
    expect(states['boom: raise_error']).toMatchObject({ Type: 'Fail', Error: 'ContenoxRaiseError' });
  });

  it('counts an on_failure edge that an edge_traversed_at_least branch asks about', () => {
    const text = chain(
      `{"id": "work", "handler": "chat_completion", "transition": {"on_failure": "fix", "branches": [{"operator": "default", "goto": "end"}]}}`,
      `{"id": "fix", "handler": "noop", "transition": {"branches": [{"operator": "edge_traversed_at_least", "edge": "work->fix", "when": "3", "goto": "end"}, {"operator": "default", "goto": "work"}]}}`,
    );
    const states = compileDocument(text, { file: 'c.json' }).asl.States as States;
    const caught = Object.values(states).flatMap((s) => (s.Catch as { Next: string; Assign: Record<string, string> }[] | undefined) ?? []);
    expect(caught.length).toBeGreaterThan(0);
    for (const c of caught.filter((c) => c.Next === 'fix')) expect(c.Assign.edge0to1).toBe('{% $edge0to1 + 1 %}');
  });
});

describe('Function: loadDocument (Contenox macros)', () => {
  const text = chain(
    `{"id": "a", "handler": "chat_completion", "system_instruction": "Use {{var:alt_model|var:model}}", "execute_config": {"model": "{{var:alt_model|var:model}}", "provider": "{{var:provider|var:alt-provider}}"}, ${end}}`,
  );
  const modelOf = (vars: Record<string, string>) => {
    const loaded = loadDocument(text, { file: 'c.json', vars, requireMacros: true });
    expect(loaded.errors.map(String)).toEqual([]);
    const task = (
      loaded.document as unknown as { tasks: { data: { system_instruction: string; execute_config: Record<string, string> } }[] }
    ).tasks[0]!;
    return [task.data.system_instruction, task.data.execute_config.model, task.data.execute_config.provider];
  };

  it('fills {{var:A|var:B}} with B when A is not set', () => {
    expect(modelOf({ model: 'm1', provider: 'local' })).toEqual(['Use m1', 'm1', 'local']);
  });

  it('prefers A when it is set', () => {
    expect(modelOf({ alt_model: 'small', model: 'm1', provider: 'local' })).toEqual(['Use small', 'small', 'local']);
  });

  it('reads a hyphenated variable name from the variable spelt with underscores', () => {
    expect(modelOf({ model: 'm1', alt_provider: 'local' })).toEqual(['Use m1', 'm1', 'local']);
  });

  it('refuses a run when neither variable is set, naming both, at the macro', () => {
    const loaded = loadDocument(text, { file: 'c.json', vars: { provider: 'local' }, requireMacros: true });
    const e = loaded.errors[0]!;
    expect(e.code).toBe('unfilled_macro');
    expect(e.message).toBe('macro {{var:alt_model|var:model}} has no value: neither alt_model nor model is set');
    expect(e.location).toMatchObject({ file: 'c.json', line: 4, column: text.split('\n')[3]!.indexOf('{{var:alt_model') + 1 });
  });
});

describe('Function: loadDocument (Contenox tool allowlists and input variables)', () => {
  const tools = (list: string) =>
    chain(`{"id": "a", "handler": "chat_completion", "execute_config": {"model": "m", "tools": ${list}}, ${end}}`);
  const graphTools = (text: string) => {
    const loaded = loadDocument(text, { file: 'c.json' });
    expect(loaded.errors.map(String)).toEqual([]);
    return loaded.graph!.nodes[0]!.tools;
  };

  it('grants every tool for "*", and takes "!name" out of it', () => {
    expect(graphTools(tools('["*"]'))).toEqual(['shell', 'fs-list', 'fs-read', 'http_fetch', 'web-search']);
    expect(graphTools(tools('["*", "!local_shell", "!webtools"]'))).toEqual(['fs-list', 'fs-read', 'web-search']);
  });

  it('grants nothing for exclusions alone', () => {
    expect(graphTools(tools('["!local_shell"]'))).toEqual([]);
  });

  it('names an unknown tool in an exclusion at its place', () => {
    const text = tools('["*", "!local_shel"]');
    const e = loadDocument(text, { file: 'c.json' }).errors[0]!;
    expect(e.code).toBe('unknown_tool');
    expect(e.message).toBe("task 'a' names tool 'local_shel', which does not exist here (did you mean 'local_shell'?)");
    expect(e.location).toMatchObject({ line: 4, column: text.split('\n')[3]!.indexOf('"!local_shel"') + 1 });
  });

  it('refuses an input_var that names no variable of the chain, at the field, with a did-you-mean', () => {
    const text = chain(`{"id": "a", "handler": "noop", "input_var": "inptu", ${end}}`);
    const e = loadDocument(text, { file: 'c.json' }).errors[0]!;
    expect(e.code).toBe('unknown_input_var');
    expect(e.message).toBe("task 'a' reads input_var 'inptu', which is no variable of this chain (did you mean 'input'?)");
    expect(e.location).toMatchObject({ file: 'c.json', line: 4, column: text.split('\n')[3]!.indexOf('"inptu"') + 1 });
  });

  it('accepts the variables Contenox defines: input, a task id, previous_output, last_error, <task>_error', () => {
    for (const v of ['input', 'a', 'previous_output', 'last_error', 'a_error'])
      expect(loadDocument(chain(`{"id": "a", "handler": "noop", "input_var": "${v}", ${end}}`), { file: 'c.json' }).errors).toEqual([]);
  });
});

describe('Function: compileDocument (Contenox retries)', () => {
  const retryOf = (task: string) => {
    const states = compileDocument(chain(task), { file: 'c.json' }).asl.States as Record<string, { Retry?: { MaxAttempts: number }[] }>;
    return states.a!.Retry?.find((r) => r.MaxAttempts !== undefined);
  };

  it('makes one attempt for a retry_policy without max_attempts (its zero value disables retry)', () => {
    expect(
      retryOf(`{"id": "a", "handler": "chat_completion", "execute_config": {"retry_policy": {"initial_backoff": "1s"}}, ${end}}`),
    ).toBeUndefined();
  });

  it('still retries retry_on_failure times when the retry_policy makes one attempt', () => {
    expect(
      retryOf(
        `{"id": "a", "handler": "chat_completion", "retry_on_failure": 2, "execute_config": {"retry_policy": {"max_attempts": 1}}, ${end}}`,
      ),
    ).toMatchObject({ MaxAttempts: 2 });
  });
});

describe('Function: loadDocument (a Contenox chain in a .json file)', () => {
  const valid = chain(`{"id": "a", "handler": "noop", ${end}}`);

  it('refuses a trailing comma, which YAML would take and Contenox does not, at the comma', () => {
    const text = valid.replace(`${end}}\n]`, `${end}},\n]`);
    const e = loadDocument(text, { file: 'c.json' }).errors[0]!;
    expect(e.code).toBe('invalid_document');
    expect(e.message).toBe("invalid JSON: Unexpected token ']'");
    expect(e.location).toMatchObject({ file: 'c.json', line: 5, column: 1 });
  });

  it('refuses a comment at the comment, not at 1:1', () => {
    const text = valid.replace('"id": "c",', '"id": "c", // the chain');
    const e = loadDocument(text, { file: 'c.json' }).errors[0]!;
    expect(e.code).toBe('invalid_document');
    expect(e.message).toBe('invalid JSON: Expected double-quoted property name');
    expect(e.location).toMatchObject({ file: 'c.json', line: 2, column: 12 });
  });

  it('still reads the same text as YAML from a .yaml file', () => {
    const text = valid.replace(`${end}}\n]`, `${end}},\n]`);
    expect(loadDocument(text, { file: 'c.yaml' }).errors).toEqual([]);
  });
});

describe('Function: loadDocument (YAML in a .json file)', () => {
  it('reads text that does not start like JSON as YAML', () => {
    const text = 'id: y\ntasks:\n  - id: a\n    handler: noop\n';
    expect(loadDocument(text, { file: 'c.json' }).errors).toEqual([]);
  });
});

describe('Function: loadDocument (Contenox task fields)', () => {
  it('refuses a field of the wrong type at its value, saying what to write', () => {
    const text = chain(`{"id": "a", "handler": "noop", "retry_on_failure": "two", ${end}}`);
    const e = loadDocument(text, { file: 'c.json' }).errors[0]!;
    expect(e.code).toBe('invalid_document');
    expect(e.message).toBe('task \'a\': `retry_on_failure` must be a whole number, got "two"');
    expect(e.hint).toBe('write "retry_on_failure": 2');
    expect(e.location).toMatchObject({ line: 4, column: text.split('\n')[3]!.indexOf('"two"') + 1 });
  });

  it('refuses a timeout that is no Go duration, and takes one that is', () => {
    const bad = chain(`{"id": "a", "handler": "noop", "timeout": "30 seconds", ${end}}`);
    expect(loadDocument(bad, { file: 'c.json' }).errors[0]!.message).toBe(
      'task \'a\': `timeout` "30 seconds" is not a Go duration (a number with a unit)',
    );
    expect(loadDocument(bad.replace('30 seconds', '1m30s'), { file: 'c.json' }).errors).toEqual([]);
  });

  it('warns of a key Contenox does not define at the key, with a did-you-mean, and loads the chain', () => {
    const text = chain(`{"id": "a", "handler": "noop", "input_vars": "input", "execute_config": {"modle": "m"}, ${end}}`);
    const loaded = loadDocument(text, { file: 'c.json' });
    expect(loaded.errors).toEqual([]);
    const line = text.split('\n')[3]!;
    expect(loaded.warnings.map((w) => [w.code, w.message, w.location?.column])).toEqual([
      [
        'unknown_key',
        "task 'a' has key 'input_vars', which Contenox does not define: it has no effect (did you mean 'input_var'?)",
        line.indexOf('"input_vars"') + 1,
      ],
      [
        'unknown_key',
        "task 'a': execute_config has key 'modle', which Contenox does not define: it has no effect (did you mean 'model'?)",
        line.indexOf('"modle"') + 1,
      ],
    ]);
  });
});

describe('Function: compileDocument (Contenox prompt templates)', () => {
  type Task = { Arguments: { inputs: { value: string; steps?: unknown } } };
  const text = chain(
    `{"id": "summarise", "handler": "chat_completion", "transition": {"branches": [{"operator": "default", "goto": "translate"}]}}`,
    `{"id": "translate", "handler": "chat_completion", "input_var": "input", "prompt_template": "Translate {{.summarise}} after {{.previous_output}}", ${end}}`,
  );
  const translate = (compileDocument(text, { file: 'c.json' }).asl.States as Record<string, Task>).translate!;

  it('sends the rendered template as the whole prompt, with no earlier step appended as context', () => {
    expect(translate.Arguments.inputs.steps).toBeUndefined();
    expect(translate.Arguments.inputs.value).toContain('"Translate " & $string(`summarise`)');
  });

  it('places {{.previous_output}} as the output of the task that ran before', () => {
    expect(translate.Arguments.inputs.value).toContain('" after " & $string($prev)');
  });
});

describe('Function: compileDocument (Contenox loops and the history quota)', () => {
  const loop = (when: string) =>
    chain(
      `{"id": "draft", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "critique"}]}}`,
      `{"id": "critique", "handler": "noop", "transition": {"branches": [{"operator": "edge_traversed_at_least", "edge": "critique->draft", "when": "${when}", "goto": "end"}, {"operator": "default", "goto": "draft"}]}}`,
    );

  it('counts a bounded loop once per time round it', () => {
    const three = compileDocument(loop('3'), { file: 'c.json' }).explain.quotas.worstCaseHistoryEvents;
    const thirty = compileDocument(loop('30'), { file: 'c.json' }).explain.quotas.worstCaseHistoryEvents;
    expect(thirty).toBeGreaterThan(three * 5);
  });

  it('refuses a loop whose count lets a run outgrow the history quota, at the task, before any run', () => {
    let error: unknown;
    try {
      compileDocument(loop('50000'), { file: 'c.json' });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'history_limit', location: { file: 'c.json', line: 4, column: 1 } });
    expect((error as Error).message).toMatch(/^a run can write up to \d+ history events in the worst case; Standard workflows allow 25000/);
    expect((error as { hint: string }).hint).toBe(
      'lower the `when` count of the edge_traversed_at_least branch that ends its loop, or the retries of that task, or compile with --express',
    );
  });
});

describe('Function: compileDocument (a Contenox task no branch of which matches)', () => {
  it('fails the run with ContenoxNoTransition, naming the task and the value, when there is no default', () => {
    const text = chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "equals", "when": "yes", "goto": "end"}]}}`,
    );
    const states = compileDocument(text, { file: 'c.json' }).asl.States as Record<string, Record<string, unknown>>;
    expect(states['a: route']!.Default).toBe('a: no branch');
    expect(states['a: no branch']).toMatchObject({ Type: 'Fail', Error: 'ContenoxNoTransition' });
    expect(states['a: no branch']!.Cause).toMatch(/"task 'a': no matching transition found for eval: " & \$string\(\$e\) \) %}$/);
  });

  it('adds no such state when the task has a default', () => {
    const states = compileDocument(chain(`{"id": "a", "handler": "noop", ${end}}`), { file: 'c.json' }).asl.States as Record<
      string,
      unknown
    >;
    expect(states['a: no branch']).toBeUndefined();
  });
});
