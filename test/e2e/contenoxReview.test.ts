// The Contenox review chain as its users run it (`git diff | contenox run --chain ./review.json`),
// through the real CLI in its own process: the diff on standard input is the chain's input.
import { spawnSync } from 'node:child_process';
import { copyFileSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STEPFORGE_BIN, stepforgeWithStdin, tempProject } from './support/testIo.js';

const DIFF = 'diff --git a/x.go b/x.go\n+func add(a, b int) int { return a - b }\n';

const stepforge = stepforgeWithStdin;

describe('Command: run (a Contenox task chain)', () => {
  const project = tempProject('sf-contenox-');
  afterAll(() => project.remove());
  copyFileSync(join(__dirname, 'fixtures/contenox/review.json'), join(project.dir, 'review.json'));
  writeFileSync(join(project.dir, 'policy.json'), '[]');
  const vars = ['--var', 'model=any-model-id', '--var', 'provider=local'];

  it('runs the review chain with a diff piped on standard input, as Contenox users type it', () => {
    for (const argv of [
      ['run', 'review.json'],
      ['run', '--chain', 'review.json'],
      ['run', 'review.json', '--input', '-'],
    ]) {
      const r = stepforge(project.dir, [...argv, ...vars, '--json'], DIFF);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
      // The offline provider echoes its prompt: the diff reached the review task as its input.
      expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: `[offline:echo] ${DIFF}` });
    }
  }, 200_000);

  it('fills macros from the environment too', () => {
    const r = stepforge(project.dir, ['run', 'review.json', '--json'], DIFF, { model: 'm', provider: 'local' });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED' });
  }, 120_000);

  it('refuses an unfilled macro before the run, located in the chain', () => {
    const r = stepforge(project.dir, ['run', 'review.json', '--json'], DIFF);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'unfilled_macro', file: 'review.json', line: 10, column: 19 });
    const bad = stepforge(project.dir, ['run', 'review.json', '--var', 'model'], DIFF);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--var takes NAME=VALUE, got 'model'");
  }, 120_000);

  it("hands a chat_completion's tool calls to the execute_tool_calls task its tool_call branch goes to, as Contenox runs them", () => {
    writeFileSync(join(project.dir, 'a.go'), 'package x\n');
    // The offline provider's script: the first turn asks for two calls, the second answers.
    writeFileSync(
      join(project.dir, 'script.json'),
      JSON.stringify({
        steps: {
          review: [
            {
              text: '',
              toolCalls: [
                { tool: 'shell', args: { command: 'cat a.go' } },
                { tool: 'shell', args: { command: 'ls' } },
              ],
            },
            { text: 'LGTM' },
          ],
        },
      }),
    );
    const r = stepforge(project.dir, ['run', 'review.json', ...vars, '--json'], DIFF, { STEPFORGE_LOCAL_SCRIPT: 'script.json' });
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { runId: string };
    expect(out).toMatchObject({ status: 'SUCCEEDED', output: '[offline:script] LGTM' });
    const shown = JSON.parse(stepforge(project.dir, ['runs', 'show', out.runId, '--json']).out) as {
      steps: { id: string; records: { output: unknown }[] }[];
      events: { type: string; stepId: string; detail: { args: unknown; message: string } }[];
    };
    // review ran twice (asked for tools, then answered), run_tools once in between.
    expect(shown.steps.map((s) => [s.id, s.records.length])).toEqual([
      ['review', 2],
      ['run_tools', 2],
    ]);
    expect(JSON.parse(shown.steps[1]!.records[0]!.output as string)).toEqual({ exitCode: 0, stdout: 'package x\n', stderr: '' });
    // The calls run under the chat's tools_policies: `ls` is not among its allowed commands.
    expect(shown.events.filter((e) => e.type === 'PolicyDenied').map((e) => [e.stepId, e.detail.args, e.detail.message])).toEqual([
      [
        'run_tools:tool',
        { command: 'ls' },
        `shell: command "ls" is not in the allowed list (go, make, npm, cargo, grep, cat) (this task's tools_policies)`,
      ],
    ]);
  }, 200_000);

  it('runs a chain given no input (an empty object, an empty file, /dev/null) with the empty text as its input', () => {
    writeFileSync(join(project.dir, 'n.json'), '{"id":"n","tasks":[{"id":"a","handler":"noop"}]}');
    const runs = [
      stepforge(project.dir, ['run', 'n.json', '--input', '{}', '--json']),
      stepforge(project.dir, ['run', 'n.json', '--json'], ''),
      stepforge(project.dir, ['run', 'n.json', '--input', '-', '--json'], ''),
    ];
    const devNull = spawnSync(process.execPath, [STEPFORGE_BIN, 'run', 'n.json', '--json'], {
      cwd: project.dir,
      stdio: [openSync('/dev/null', 'r'), 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
    });
    runs.push({ code: devNull.status, out: devNull.stdout, err: devNull.stderr });
    for (const r of runs) {
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: '' });
    }
  }, 200_000);

  it('runs a bounded loop to its end by its edge counter, and raise_error fails the run by name', () => {
    writeFileSync(
      join(project.dir, 'loop.json'),
      JSON.stringify({
        id: 'loop',
        tasks: [
          {
            id: 'a',
            handler: 'noop',
            transition: {
              branches: [
                { operator: 'edge_traversed_at_least', edge: 'a->b', when: '3', goto: 'done' },
                { operator: 'equals', when: 'noop', goto: 'b' },
              ],
            },
          },
          { id: 'b', handler: 'noop', transition: { branches: [{ operator: 'default', goto: 'a' }] } },
          {
            id: 'done',
            handler: 'route',
            transition: {
              branches: [
                { operator: 'starts_with', when: 'nothing', goto: 'boom' },
                { operator: 'default', goto: 'end' },
              ],
            },
          },
          { id: 'boom', handler: 'raise_error' },
        ],
      }),
    );
    const r = stepforge(project.dir, ['run', 'loop.json', '--json'], 'tide pools');
    expect(r.code, r.err).toBe(0);
    // noop and route pass their input on: the loop went round and the text came out unchanged.
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: 'tide pools' });
    const history = stepforge(project.dir, ['runs', 'show', JSON.parse(r.out).runId, '--json']);
    const steps = (JSON.parse(history.out) as { steps: { id: string; status: string }[] }).steps;
    expect(steps.find((s) => s.id === 'boom')?.status).not.toBe('succeeded');
    writeFileSync(
      join(project.dir, 'fail.json'),
      JSON.stringify({ id: 'fail', tasks: [{ id: 'x', handler: 'raise_error', prompt_template: 'ignored' }] }),
    );
    const f = stepforge(project.dir, ['run', 'fail.json', '--json'], 'bad input');
    expect(f.code).toBe(1);
    expect(JSON.parse(f.out)).toMatchObject({ status: 'FAILED' });
    const shown = JSON.parse(stepforge(project.dir, ['runs', 'show', JSON.parse(f.out).runId, '--json']).out) as {
      run: { error: unknown };
    };
    // The run's error is the named one, with the task's input as its message.
    expect(shown.run.error).toEqual({ name: 'ContenoxRaiseError', message: 'bad input' });
  }, 120_000);
});
