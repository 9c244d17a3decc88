// Contenox's macros besides {{var:…}}, its Go-template variables, and edges to `end`, as its engine
// defines them: time macros take the time the run started (never the compile's), {{edge_count:…}}
// reads the count when the task runs, a key the template's data lacks is `<no value>`, and a macro
// with no meaning in a state machine is a warning at the macro.
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument } from '../../src/index.js';
import { goLayoutPicture } from '../../src/contenox/runtimeMacros.js';

const end = '"transition": {"branches": [{"operator": "default", "goto": "end"}]}';
const chain = (...tasks: string[]) => `{\n"id": "c",\n"tasks": [\n${tasks.join(',\n')}\n]\n}\n`;
type State = { Type: string; Arguments?: { config?: { system?: string }; inputs?: { value: string } }; Choices?: { Condition: string }[] };
const statesOf = (text: string) => compileDocument(text, { file: 'c.json' }).asl.States as Record<string, State>;

describe('Function: compileDocument (Contenox runtime macros)', () => {
  const text = chain(
    `{"id": "ask", "handler": "chat_completion", "system_instruction": "Current date: {{date}}. Now {{now}}. Chain {{chain:id}}.", "prompt_template": "at {{now}} in {{date:Jan 2006}}: {{.input}}", "execute_config": {"tools": ["local_fs"]}, ${end}}`,
  );
  const ask = statesOf(text).ask!;

  it('evaluates {{date}} in a system_instruction when the run starts, not when it is compiled', () => {
    const system = ask.Arguments!.config!.system!;
    expect(system).toMatch(
      /^\{% "Current date: " & \$fromMillis\(\$toMillis\(\$states\.context\.Execution\.StartTime\), "\[Y0001\]-\[M01\]-\[D01\]"\)/,
    );
    expect(system).not.toContain(new Date().toISOString().slice(0, 10));
  });

  it('gives {{now}} the day in a system_instruction and RFC 3339 in a prompt, as Contenox does', () => {
    expect(ask.Arguments!.config!.system!).toContain(
      '". Now " & $fromMillis($toMillis($states.context.Execution.StartTime), "[Y0001]-[M01]-[D01]")',
    );
    expect(ask.Arguments!.inputs!.value).toContain('"[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01][Z01:01t]"');
    expect(ask.Arguments!.inputs!.value).toContain('"[MNn,*-3] [Y0001]"');
  });

  it('fills {{chain:id}} with the chain id', () => {
    expect(ask.Arguments!.config!.system!).toMatch(/ & "\. Chain c\." %\}$/);
  });

  it('keeps a system_instruction without runtime macros a plain string', () => {
    const states = statesOf(chain(`{"id": "ask", "handler": "chat_completion", "system_instruction": "Be brief.", ${end}}`));
    expect(states.ask!.Arguments!.config!.system).toBe('Be brief.');
  });

  it('turns Go layouts into pictures, with brackets doubled', () => {
    expect(goLayoutPicture('2006-01-02T15:04:05Z07:00')).toBe('[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01][Z01:01t]');
    expect(goLayoutPicture('Monday [3:04PM]')).toBe('[FNn] [[[h1]:[m01][PN]]]');
  });

  it('lists the granted tool sets for {{tools}} and {{toolservice:…}}', () => {
    const tools = (payload: string) =>
      statesOf(
        chain(
          `{"id": "ask", "handler": "chat_completion", "prompt_template": "${payload}", "execute_config": {"tools": ["local_shell", "local_fs"]}, ${end}}`,
        ),
      ).ask!.Arguments!.inputs!.value;
    expect(tools('{{tools}}')).toContain(JSON.stringify(JSON.stringify({ local_fs: ['fs-list', 'fs-read'], local_shell: ['shell'] })));
    expect(tools('{{toolservice:tools}}')).toContain(JSON.stringify(JSON.stringify(['local_fs', 'local_shell'])));
    expect(tools('{{toolservice:tools local_shell}}')).toContain(JSON.stringify(JSON.stringify(['shell'])));
    expect(tools('{{toolservice:tools webtools}}')).toContain(JSON.stringify('[]'));
  });

  it('reads {{edge_count:A->B}} from the counter when the task runs, counting an edge no branch asks about', () => {
    const states = statesOf(
      chain(
        `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "default", "goto": "b"}]}}`,
        `{"id": "b", "handler": "chat_completion", "system_instruction": "used {{edge_count:a->b}} of 3, {{edge_count:b->end}}", ${end}}`,
      ),
    );
    expect(states.b!.Arguments!.config!.system).toBe('{% "used " & $string($edge0to1) & " of 3, 0" %}');
    const init = (states.Start as unknown as { Assign: Record<string, unknown> }).Assign;
    expect(init.edge0to1).toBe(0);
    const rule = (states['a: route'] as unknown as { Choices: { Assign: Record<string, string> }[] }).Choices[0]!;
    expect(rule.Assign.edge0to1).toBe('{% $edge0to1 + 1 %}');
  });
});

describe('Function: compileDocument (Contenox template variables)', () => {
  it('renders a key the template data lacks as <no value>, as Go text/template does', () => {
    const states = statesOf(
      chain(`{"id": "ask", "handler": "chat_completion", "prompt_template": "[{{.missing}}] [{{ .last_error }}]", ${end}}`),
    );
    expect(states.ask!.Arguments!.inputs!.value).toContain('"[<no value>] [<no value>]"');
  });

  it('keeps the error on_failure took as last_error and <task>_error', () => {
    const text = chain(
      `{"id": "boom", "handler": "raise_error", "transition": {"on_failure": "explain", "branches": []}}`,
      `{"id": "explain", "handler": "chat_completion", "prompt_template": "{{.last_error}} / {{.boom_error}} / {{.explain_error}}", ${end}}`,
    );
    const states = statesOf(text);
    expect(states.explain!.Arguments!.inputs!.value).toContain('$contenox_errors.`last_error`');
    expect(states.explain!.Arguments!.inputs!.value).toContain('$contenox_errors.`boom_error`');
    // explain has no on_failure: nothing ever sets explain_error.
    expect(states.explain!.Arguments!.inputs!.value).toContain('" / <no value>"');
    const raised = states['boom: raise_error'] as unknown as { Assign: Record<string, string> };
    expect(raised.Assign.contenox_errors).toBe(
      '{% ( $t := "task boom: " & $string($s_boom); $merge([$contenox_errors, {"last_error": $t, "boom_error": $t}]) ) %}',
    );
  });
});

describe('Function: loadDocument (Contenox macros that stay as written)', () => {
  it('warns of {{host:os}} at the macro, saying why', () => {
    const text = chain(`{"id": "ask", "handler": "chat_completion", "system_instruction": "You run on {{host:os}}.", ${end}}`);
    const loaded = loadDocument(text, { file: 'c.json' });
    expect(loaded.errors).toEqual([]);
    expect(loaded.warnings).toMatchObject([
      {
        code: 'unsupported_macro',
        message:
          'macro {{host:os}} is kept as written: a state machine has no one host: a step runs in this process or in a Lambda function',
        location: { file: 'c.json', line: 4, column: 79 },
      },
    ]);
  });

  it('says nothing of a Go template action such as {{else}}', () => {
    const text = chain(`{"id": "ask", "handler": "chat_completion", "prompt_template": "{{if .input}}a{{else}}b{{end}}", ${end}}`);
    expect(loadDocument(text, { file: 'c.json' }).warnings).toEqual([]);
  });
});

describe('Function: loadDocument (a Contenox edge to end)', () => {
  const text = (when: string) =>
    chain(
      `{"id": "a", "handler": "noop", "transition": {"branches": [{"operator": "edge_traversed_at_least", "edge": "a->end", "when": "${when}", "goto": "b"}, {"operator": "default", "goto": "end"}]}}`,
      `{"id": "b", "handler": "noop", ${end}}`,
    );

  it('accepts "FROM->end", whose count is never raised: 0', () => {
    expect(loadDocument(text('1'), { file: 'c.json' }).errors).toEqual([]);
    expect(statesOf(text('1'))['a: route']!.Choices![0]!.Condition).toBe('{% false %}');
    expect(statesOf(text('0'))['a: route']!.Choices![0]!.Condition).toBe('{% true %}');
  });

  it('still refuses an edge to no task, at the edge', () => {
    const bad = text('1').replace('a->end', 'a->nowhere');
    expect(loadDocument(bad, { file: 'c.json' }).errors[0]).toMatchObject({
      code: 'invalid_edge',
      message: 'branch 1 of task \'a\' counts edge "a->nowhere": expected "FROM->TO" naming two tasks of this chain (TO may be end)',
    });
  });
});
