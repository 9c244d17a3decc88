// The DSL corpus: every document under corpus/ with its expected graph (valid documents) or its
// expected errors as class@line:col (invalid ones). Graphs are written compactly:
// nodes `name:kind` (`^parent` for nested steps), edges `from>to`, result = the default result step,
// outputs = each node's output name (its `output:`, else the step name).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadDslDocument, type DslDocument } from '@stepforge/compiler';

const dir = fileURLToPath(new URL('./corpus/', import.meta.url));

interface Expectation {
  readonly strict?: boolean;
  readonly errors?: readonly string[];
  readonly warnings?: readonly string[];
  readonly nodes?: string;
  readonly edges?: string;
  readonly result?: string;
  readonly order?: string;
  /** A substring the first error's message must contain. */
  readonly message?: string;
  /** A substring the first error's hint must contain. */
  readonly hint?: string;
  /** Each node's output name (the canvas node id), in node order. */
  readonly outputs?: string;
}

const EXPECTED: Readonly<Record<string, Expectation>> = {
  'v01-minimal.yaml': { nodes: 'answer:agent', edges: '', result: 'answer' },
  'v02-sequence-by-reference.yaml': { nodes: 'draft:agent edit:agent', edges: 'draft>edit', result: 'edit' },
  'v03-parallel-roots.yaml': { nodes: 'left:agent right:agent join:agent', edges: 'left>join right>join', result: 'join' },
  'v04-after-only.yaml': {
    nodes: 'prepare:function run:function tidy:function',
    edges: 'prepare>run prepare>tidy run>tidy',
    result: 'tidy',
  },
  'v05-source-order-ties.yaml': {
    nodes: 'late:agent early:agent independent:agent',
    edges: 'early>late',
    order: 'early late independent',
    result: 'independent',
  },
  'v06-for-each.yaml': { nodes: 'read_all:for_each read:agent^read_all', edges: '', result: 'read_all' },
  'v07-while.yaml': { nodes: 'wait_ready:while check:function^wait_ready', edges: '', result: 'wait_ready' },
  'v08-conditional-when.yaml': {
    nodes: 'is_urgent:conditional page:agent summary:agent',
    edges: 'is_urgent>page is_urgent>summary',
    result: 'summary',
  },
  'v09-parallel-analyzer.yaml': { nodes: 'debate:parallel_analyzer', edges: '', result: 'debate' },
  'v10-handoff-router.yaml': { nodes: 'route:handoff_router', edges: '', result: 'route' },
  'v11-judge-loop.yaml': { nodes: 'poem:judge_loop', edges: '', result: 'poem' },
  'v12-mcp-and-connector.yaml': { nodes: 'issues:mcp_tool post:connector', edges: 'issues>post', result: 'post' },
  'v13-output-mapping.yaml': { nodes: 'first:agent second:agent', edges: '', result: 'second' },
  'v14-nested-outer-reference.yaml': {
    nodes: 'plan:agent each:for_each do_task:agent^each check_task:agent^each',
    edges: 'plan>each do_task>check_task',
    result: 'each',
  },
  'v15-nested-loops.yaml': { nodes: 'rows:for_each cells:for_each^rows compute:function^cells', edges: '', result: 'rows' },
  'v16-diamond.yaml': {
    nodes: 'top:agent left:agent right:agent bottom:agent',
    edges: 'top>left top>right left>bottom right>bottom',
    result: 'bottom',
  },
  'v17-json-string-traversal.yaml': { nodes: 'extract:function use:function', edges: 'extract>use', result: 'use' },
  'v18-unknown-field-warning.yaml': { nodes: 'one:agent', edges: '', warnings: ['unknown_field@8:5'], result: 'one' },
  'v19-block-scalars.yaml': { nodes: 'greet:agent letter:agent', edges: 'greet>letter', result: 'letter' },
  'v20-secrets-list.yaml': { nodes: 'call:function', edges: '', result: 'call' },
  'v21-retry.yaml': { nodes: 'call:function', edges: '', result: 'call' },
  'v22-graphn-declarations.yaml': {
    nodes: 'security_review:agent performance_review:agent synthesize:agent',
    edges: 'security_review>synthesize performance_review>synthesize',
    result: 'synthesize',
    outputs: 'security_result performance_result report',
  },
  'v23-judge-worker-agents.yaml': { nodes: 'quality_check:judge_loop', edges: '', result: 'quality_check', outputs: 'final_copy' },
  'v24-analyzer-agents-focus.yaml': { nodes: 'multi_review:parallel_analyzer', edges: '', result: 'multi_review', outputs: 'report' },
  'v25-while-reads-previous.yaml': {
    nodes: 'collect:while fetch:function^collect check:function^collect',
    edges: 'fetch>check',
    result: 'collect',
    outputs: 'collected page_data status',
  },
  'v26-source-order-mapping.yaml': {
    nodes: 'zeta:agent alpha:agent omega:agent',
    edges: 'alpha>omega',
    order: 'zeta alpha omega',
    result: 'omega',
    outputs: 'zeta alpha omega',
  },
  // The same agent twice: each analysis is collected under its own key (`sec (1)`, `sec (2)`).
  'v27-analyst-twice.yaml': { nodes: 'review:parallel_analyzer', edges: '', result: 'review', outputs: 'review' },
  'e01-yaml-syntax.yaml': { errors: ['yaml@5:4'] },
  'e02-yaml-unclosed-quote.yaml': { errors: ['yaml@8:1'], message: 'Missing closing' },
  'e03-not-a-mapping.yaml': { errors: ['schema@1:1'], message: 'must be a mapping' },
  'e04-missing-steps.yaml': { errors: ['schema@1:1'], message: "missing required field 'steps'" },
  'e05-wrong-type.yaml': { errors: ['schema@7:21'], message: 'steps.loop.max_iterations' },
  'e06-unknown-kind.yaml': { errors: ['schema@4:11'], message: "unknown step kind call: 'agnet'; did you mean 'agent'?" },
  'e07-missing-required-field.yaml': { errors: ['schema@4:3'], message: "missing required field 'tool' in steps.call" },
  'e08-unknown-field-strict.yaml': { strict: true, errors: ['unknown_field@8:5'], message: "unknown field 'promt'" },
  'e09-unknown-agent.yaml': { errors: ['unknown_agent@6:12'], message: "unknown agent 'reseacher'" },
  'e10-unknown-agent-in-analysts.yaml': { errors: ['unknown_agent@8:18'], message: "'bear'" },
  'e11-unknown-function.yaml': { errors: ['unknown_function@6:15'], message: "'fetsh'" },
  'e12-unknown-mcp-server.yaml': { errors: ['unknown_mcp_server@5:13'], message: "'github'" },
  'e13-unknown-step-after.yaml': { errors: ['unknown_step@10:18'], message: "unknown step 'three'" },
  'e14-unknown-step-expression.yaml': { errors: ['unknown_step@7:29'], message: "unknown step 'zero'" },
  'e15-invisible-nested-step.yaml': { errors: ['unknown_step@15:24'], message: 'inside the body of' },
  'e16-invalid-secret.yaml': { errors: ['invalid_secret@3:10'] },
  'e17-invalid-step-secret.yaml': { errors: ['invalid_secret@8:16'] },
  'e18-expression-syntax.yaml': { errors: ['expression@7:54'], message: "a literal after 'default'" },
  'e19-expression-unterminated.yaml': { errors: ['expression@7:29'], message: 'unterminated' },
  'e20-expression-in-block.yaml': { errors: ['expression@9:32'], message: "unexpected '=='" },
  'e21-expression-in-condition.yaml': { errors: ['expression@7:23'], message: "did you mean '=='" },
  'e22-cycle.yaml': { errors: ['cycle@4:3'], message: 'alpha → beta → gamma → alpha' },
  'e23-self-cycle.yaml': { errors: ['cycle@7:12'], message: "'me' depends on itself" },
  'e24-loop-reads-itself.yaml': { errors: ['cycle@11:28'] },
  'e25-duplicate-step.yaml': { errors: ['duplicate_step@11:7'], message: 'first defined at line 4' },
  'e26-bad-default-type.yaml': { errors: ['schema@4:36'], message: 'default does not match' },
  'e27-steps-without-output.yaml': { errors: ['expression@10:25'], message: 'steps.a.output' },
  'e28-unknown-input-strict.yaml': { strict: true, errors: ['unknown_input@10:31'], message: "'input.topik'" },
  'e29-multiple-errors.yaml': { errors: ['unknown_agent@7:12', 'unknown_function@10:15', 'unknown_step@11:12'] },
  'e30-bad-step-name.yaml': { errors: ['schema@4:3'], message: "step 'has space': a step name must start" },
  'e31-output-reads-nested.yaml': { errors: ['unknown_step@11:12'], message: 'not visible at the top level' },
  'e32-double-quoted-escapes.yaml': { errors: ['expression@7:50'], message: "unexpected '!'" },
  'e33-bad-retry.yaml': { errors: ['schema@8:21'], message: 'steps.call.retry.max_attempts' },
  'e34-list-form.yaml': {
    errors: ['schema@5:3'],
    message: 'steps is a list (- name: … kind: …), but steps are written as a mapping of step name to step definition',
    hint: 'steps:\n        draft:\n          call: agent\n          agent: writer\n        polish:\n          call: agent',
  },
  'e35-kind-instead-of-call.yaml': { errors: ['schema@4:3'], message: "missing required field 'call' in steps.draft" },
  'e36-do-list.yaml': {
    errors: ['schema@8:7'],
    message: 'steps.pages.do is a list',
    hint: 'do:\n        get:\n          call: function\n          function: fetch',
  },
  'e37-proto-step-name.yaml': { errors: ['schema@7:3'], message: "'__proto__' cannot be a step name" },
  'e38-both-spellings.yaml': { errors: ['schema@7:5'], message: 'write either generator: or worker_agent:' },
  'e39-missing-aggregator.yaml': {
    errors: ['schema@4:3'],
    message: "missing required field 'aggregator' in steps.review (or its other spelling 'aggregator_agent')",
  },
  'e40-output-not-a-name.yaml': { errors: ['schema@7:13'], message: "steps.answer.output: expected the name of this step's output" },
  'e41-empty-steps.yaml': { errors: ['schema@2:8'], message: 'a workflow needs at least one step' },
  'e42-duplicate-key.yaml': { errors: ['yaml@7:3'], message: 'Map keys must be unique' },
  'e43-misspelt-call-nested.yaml': {
    errors: ['schema@9:15'],
    message: "steps.loop.do.step_one.call: unknown step kind call: 'funtion'; did you mean 'function'?",
  },
};

/** Compact graph notation (see the file comment). */
function describeGraph(
  doc: DslDocument,
  graph: {
    nodes: readonly { handle: string; kind: string; output?: string; parent?: string }[];
    edges: readonly (readonly [number, number])[];
  },
) {
  return {
    outputs: graph.nodes.map((n) => n.output).join(' '),
    nodes: graph.nodes.map((n) => `${n.handle}:${n.kind}${n.parent ? `^${n.parent}` : ''}`).join(' '),
    edges: graph.edges.map(([a, b]) => `${graph.nodes[a]!.handle}>${graph.nodes[b]!.handle}`).join(' '),
    result: doc.workflow.steps[doc.workflow.resultStep!]!.name,
    order: doc.workflow.order.map((i) => doc.workflow.steps[i]!.name).join(' '),
  };
}

const files = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('Function: loadDslDocument (corpus)', () => {
  it('has at least 40 documents, each with an expectation', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    expect(files.filter((f) => !(f in EXPECTED))).toEqual([]);
    expect(Object.keys(EXPECTED).filter((f) => !files.includes(f))).toEqual([]);
  });

  for (const file of files) {
    const exp = EXPECTED[file] ?? {};
    it(`${exp.errors ? 'rejects' : 'loads'} ${file}`, () => {
      const text = readFileSync(dir + file, 'utf8');
      const r = loadDslDocument(text, { file, strict: exp.strict ?? false });
      const errors = r.errors.map((e) => `${e.code}@${e.location?.line}:${e.location?.column}`);
      const warnings = r.warnings.map((w) => `${w.code}@${w.location?.line}:${w.location?.column}`);
      expect(errors).toEqual(exp.errors ?? []);
      expect(warnings).toEqual(exp.warnings ?? []);
      for (const e of r.errors) {
        expect(e.name).toBe('StepforgeError');
        expect(e.location?.file).toBe(file);
        expect(e.toString()).toContain(`error[${e.code}] ${file}:${e.location?.line}:${e.location?.column}: `);
      }
      if (exp.message) expect(r.errors[0]?.message).toContain(exp.message);
      if (exp.hint) expect(r.errors[0]?.hint).toContain(exp.hint);
      if (exp.errors) {
        expect(r.document).toBeUndefined();
        return;
      }
      expect(r.document).toBeDefined();
      const g = describeGraph(r.document!, r.graph!);
      expect(g.nodes).toBe(exp.nodes);
      expect(g.edges).toBe(exp.edges);
      expect(g.result).toBe(exp.result);
      if (exp.order) expect(g.order).toBe(exp.order);
      expect(g.outputs).toBe(
        exp.outputs ??
          exp
            .nodes!.split(' ')
            .map((n) => n.split(':')[0])
            .join(' '),
      );
    });
  }
});
