// DSL loops and branches that read their own results, run on the embedded stack (offline provider,
// real python3 for the function steps): a while whose condition and body read the while's output,
// and a conditional with inline then: / else: steps.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempProject } from './support/testIo.js';

const FUNCTIONS_DIR = fileURLToPath(new URL('./fixtures/dsl-loops/', import.meta.url));

const WHILE_READS_ITSELF = `document: {dsl: "1.0.0", name: Count to three}
functions: {count_up: ""}
steps:
  count:
    call: while
    condition: "\${steps.count.output.n < 3}"
    do:
      step:
        call: function
        function: count_up
        input:
          previous: "\${steps.count.output}"
`;

const THEN_ELSE = `document: {dsl: "1.0.0", name: Route by severity}
functions: {label: ""}
input: {severity: {type: string, required: true}}
steps:
  route:
    call: conditional
    condition: "\${input.severity == 'P1'}"
    then:
      call: function
      function: label
      input: {text: urgent}
    else:
      call: function
      function: label
      input: {text: "standard \${input.severity}"}
    output: response
  page:
    call: conditional
    condition: "\${steps.route.output.label == 'urgent'}"
    then:
      call: function
      function: label
      input: {text: "paged after \${steps.route.output.label}"}
output:
  result: \${steps.route.output}
  paged: \${steps.page.output}
`;

const FOR_EACH_OVER_JSON_TEXT = `document: {dsl: "1.0.0", name: Each id, version: "0.1.0"}
functions: {list_as_text: "", take_id: ""}
steps:
  count:
    call: function
    function: list_as_text
  each:
    call: for_each
    after: [count]
    items: "\${steps.count.output}"
    as: row
    do:
      pick:
        call: function
        function: take_id
        input:
          item: "\${input.row}"
`;

const GUARDED_OFF = `document: {dsl: "1.0.0", name: Guarded off, version: "0.1.0"}
functions: {count_up: ""}
input:
  go: {type: boolean, default: false}
steps:
  maybe:
    call: conditional
    condition: "\${input.go}"
    when: "\${input.go}"
  also:
    call: function
    function: count_up
    when: "\${input.go}"
  decided:
    call: conditional
    condition: "\${input.go == false}"
`;

const FOCUSED_ANALYSTS = `document: {dsl: "1.0.0", name: Two reviews, version: "0.1.0"}
agents: {SecurityReviewer: "", PerfReviewer: "", Synthesizer: ""}
steps:
  review:
    call: parallel_analyzer
    agents:
      - {agent: SecurityReviewer, focus: security vulnerabilities}
      - {agent: PerfReviewer, focus: performance issues}
    aggregator_agent: Synthesizer
    input_template: "\${input.diff}"
`;

const JUDGE_LOOP_TWO_ROUNDS = `document: {dsl: "1.0.0", name: Draft twice, version: "0.1.0"}
agents: {Writer: "", Critic: ""}
steps:
  draft:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: "Write about: \${input.topic}"
`;

// GraphN's while shares its context between iterations: draft reads the review written below it, the
// previous iteration's (null, so blank, in the first), and the review reads this iteration's draft.
const WHILE_CARRIES = `document: {dsl: "1.0", name: Carry, version: "0.1.0"}
agents: {W: ""}
steps:
  refine:
    call: while
    condition: \${ input.iteration < 3 }
    max_iterations: 5
    do:
      draft:
        call: agent
        agent: W
        input_template: "Round \${ input.iteration }; last review: \${ steps.review.output }"
      review:
        call: agent
        agent: W
        input_template: "Review: \${ steps.draft.output }"
`;

// The same with the step read back run in a Parallel branch beside another (b and c both read a).
const WHILE_CARRIES_FROM_A_BRANCH = `document: {dsl: "1.0", name: Carry branch, version: "0.1.0"}
agents: {W: ""}
steps:
  refine:
    call: while
    condition: \${ input.iteration < 2 }
    do:
      a: {call: agent, agent: W, input_template: "A\${ input.iteration } after \${ steps.c.output }"}
      b: {call: agent, agent: W, input_template: "B"}
      c: {call: agent, agent: W, input_template: "C of \${ steps.a.output }"}
      d: {call: agent, agent: W, input_template: "D \${ steps.b.output } \${ steps.c.output }", after: a}
`;

// GraphN's conditional note: later steps read the conditional by its output: name.
const BY_OUTPUT_NAME = `document: {dsl: "1.0.0", name: Summarise maybe, version: "0.1.0"}
agents: {Writer: ""}
input:
  include_summary: {type: boolean, required: true}
steps:
  step_name:
    call: conditional
    condition: "\${input.include_summary == true}"
    output: should_summarize
  summarise:
    call: agent
    agent: Writer
    when: "\${steps.should_summarize.output}"
    input_template: "Summarise (flag \${steps.should_summarize.output})"
output:
  result: \${steps.summarise.output}
`;

describe('Embedded stack: DSL loops and branches reading their own results', () => {
  const project = tempProject('sf-dsl-loops-');
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;

  beforeAll(async () => {
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      provider: 'local',
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR },
    });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack?.close();
    project.remove();
  });

  async function runText(text: string, file: string, input: Record<string, unknown> = {}) {
    const { entry } = await service.catalog.registerText(text, file);
    const started = await service.start(entry, input);
    const done = await service.wait(started.run.runId);
    return { run: done, details: await service.details(done.runId) };
  }

  it('runs a step whose when reads a conditional by its output: name, and skips it when the condition is false', async () => {
    const on = await runText(BY_OUTPUT_NAME, 'maybe.yaml', { include_summary: true });
    expect(on.run.status).toBe('SUCCEEDED');
    expect(on.run.output).toEqual({ result: '[offline:echo] Summarise (flag true)' });
    const off = await runText(BY_OUTPUT_NAME, 'maybe.yaml', { include_summary: false });
    expect(off.run.status).toBe('SUCCEEDED');
    expect(off.details.steps.map((s) => [s.id, s.state])).toEqual([
      ['step_name', 'succeeded'],
      ['summarise', 'skipped'],
    ]);
  });

  it("runs a while whose body reads the previous iteration's result (null in the first) and whose condition reads the latest", async () => {
    const { run } = await runText(WHILE_READS_ITSELF, 'count.yaml');
    expect(run.status).toBe('SUCCEEDED');
    // Three iterations: the body saw null, then {n: 1}, then {n: 2}; the condition stopped at n = 3.
    expect(run.output).toEqual({ n: 3, saw: { n: 2, saw: { n: 1, saw: null } } });
  });

  it("runs a while body step that reads a sibling below it with that sibling's previous-iteration output (null in the first)", async () => {
    const { run } = await runText(WHILE_CARRIES, 'carry.yaml');
    expect(run.status).toBe('SUCCEEDED');
    const round = (n: number, review: string) => `[offline:echo] Review: [offline:echo] Round ${n}; last review: ${review}`;
    expect(run.output).toBe(round(2, round(1, round(0, ''))));
    const branch = await runText(WHILE_CARRIES_FROM_A_BRANCH, 'carry-branch.yaml');
    expect(branch.run.status).toBe('SUCCEEDED');
    const c = (n: number, last: string) => `[offline:echo] C of [offline:echo] A${n} after ${last}`;
    expect(branch.run.output).toBe(`[offline:echo] D [offline:echo] B ${c(1, c(0, ''))}`);
  });

  it("runs the then: step of a conditional whose condition holds, skips its else:, and outputs the branch's output", async () => {
    const { run, details } = await runText(THEN_ELSE, 'route.yaml', { severity: 'P1' });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual({ result: { label: 'urgent' }, paged: { label: 'paged after urgent' } });
    const state = Object.fromEntries(details.steps.map((s) => [s.id, s.state]));
    expect(state).toMatchObject({ 'route.then': 'succeeded', 'route.else': 'skipped', 'page.then': 'succeeded' });
  });

  it('runs the else: step otherwise, and a conditional without the picked branch outputs null', async () => {
    const { run, details } = await runText(THEN_ELSE, 'route.yaml', { severity: 'P3' });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual({ result: { label: 'standard P3' }, paged: null });
    const state = Object.fromEntries(details.steps.map((s) => [s.id, s.state]));
    expect(state).toMatchObject({ 'route.then': 'skipped', 'route.else': 'succeeded', 'page.then': 'skipped' });
  });

  it('iterates the elements of a step output that is a JSON array written as text', async () => {
    const { run } = await runText(FOR_EACH_OVER_JSON_TEXT, 'each.yaml');
    expect(run.status).toBe('SUCCEEDED');
    // Two iterations, each given one parsed element (not one iteration given the whole string).
    expect(run.output).toEqual([
      { id: 7, kind: 'dict' },
      { id: 8, kind: 'dict' },
    ]);
  });

  it('reports a conditional step whose when guard is false as skipped, as it does a function step', async () => {
    const { run, details } = await runText(GUARDED_OFF, 'guarded.yaml', { go: false });
    expect(run.status).toBe('SUCCEEDED');
    expect(details.steps.map((s) => [s.id, s.state])).toEqual([
      ['maybe', 'skipped'],
      ['also', 'skipped'],
      ['decided', 'succeeded'],
    ]);
  });

  it("puts each parallel_analyzer analyst's focus before the shared input in its prompt", async () => {
    const { run, details } = await runText(FOCUSED_ANALYSTS, 'review.yaml', { diff: 'the diff' });
    expect(run.status).toBe('SUCCEEDED');
    // The offline provider echoes each prompt: the analysts' answers show what they were sent.
    const analyses = details.records
      .filter((r) => r.stepId.startsWith('review') && !r.stepId.includes('aggregator'))
      .map((r) => r.output)
      .sort();
    expect(analyses).toEqual([
      '[offline:echo] Focus: performance issues\n\nthe diff',
      '[offline:echo] Focus: security vulnerabilities\n\nthe diff',
    ]);
  });

  it("sends a judge_loop's worker the input_template text, then that text with the previous feedback, and its evaluator the worker's output", async () => {
    // The offline provider echoes each prompt, so every answer shows the prompt it was sent.
    const { run } = await runText(JUDGE_LOOP_TWO_ROUNDS, 'draft.yaml', { topic: 'otters' });
    expect(run.status).toBe('SUCCEEDED');
    // Round 0: the worker got the template text, the evaluator the worker's answer (never PASS);
    // round 1: the template text again, then the evaluator's answer as feedback.
    const first = '[offline:echo] Write about: otters';
    expect(run.output).toBe(`[offline:echo] Write about: otters\n\nPrevious feedback: [offline:echo] ${first}`);
  });

  it('passes a judge_loop on the echo provider when the candidate starts with PASS, past both offline labels of the answer', async () => {
    // The evaluator echoes the worker's answer: "[offline:echo] [offline:echo] PASS: …"; both labels are skipped.
    const { run, details } = await runText(JUDGE_LOOP_TWO_ROUNDS.replace('Write about:', 'PASS: write about'), 'pass.yaml', {
      topic: 'otters',
    });
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toBe('[offline:echo] PASS: write about otters');
    expect(details.records.filter((r) => r.stepId.startsWith('draft[') && r.stepId.endsWith(':evaluator'))).toHaveLength(1);
  });
});

describe('Embedded stack: a judge_loop without pass_condition (scripted offline provider)', () => {
  const project = tempProject('sf-dsl-judge-');
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;
  // Each judge_loop's worker and evaluator both give the scripted answer (labelled `[offline:script] `).
  const ANSWERS: Record<string, string> = {
    dot: 'PASS.',
    newline: 'PASS\n',
    reason: 'PASS: clear and short',
    spaced: '  PASS  ',
    longer: 'PASSABLE, but redo the ending',
    lower: 'pass',
    later: 'Not a PASS',
  };

  beforeAll(async () => {
    const script = join(project.dir, 'script.json');
    writeFileSync(script, JSON.stringify({ steps: Object.fromEntries(Object.entries(ANSWERS).map(([step, text]) => [step, [{ text }]])) }));
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      provider: 'local',
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_LOCAL_SCRIPT: script },
    });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack?.close();
    project.remove();
  });

  it("passes when the evaluator's trimmed answer, past the offline label, starts with the word PASS", async () => {
    const { entry } = await service.catalog.registerText(
      `document: {dsl: "1.0.0", name: Judge answers, version: "0.1.0"}
agents: {Writer: "", Critic: ""}
steps:
  dot:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  newline:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  reason:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  spaced:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  longer:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  lower:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
  later:
    call: judge_loop
    worker_agent: Writer
    judge_agent: Critic
    max_iterations: 2
    input_template: Draft
output:
  result: "\${steps.dot.output}"
`,
      'judge.yaml',
    );
    const started = await service.start(entry, {});
    const run = await service.wait(started.run.runId);
    expect(run.status).toBe('SUCCEEDED');
    const details = await service.details(run.runId);
    // Rounds each loop ran (its evaluator's records): one when the answer passed, both (the maximum) otherwise.
    const rounds = (step: string) =>
      details.records.filter((r) => r.stepId.startsWith(`${step}[`) && r.stepId.endsWith(':evaluator')).length;
    expect(Object.fromEntries(Object.keys(ANSWERS).map((step) => [step, rounds(step)]))).toEqual({
      dot: 1,
      newline: 1,
      reason: 1,
      spaced: 1,
      longer: 2,
      lower: 2,
      later: 2,
    });
  });
});
