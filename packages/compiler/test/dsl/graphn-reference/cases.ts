// The GraphN reference's YAML examples as test cases. Each `.yaml` file beside this one is one example
// exactly as the reference prints it (see README.md); what a case adds around a fragment to make a
// whole document (declarations, the steps a fragment reads, the run's input) is written here, so that
// what is GraphN's and what is ours stay apart.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where an example comes from. */
export type ReferenceSource =
  'Skill: DSL Schema' | 'Skill: Workflow Building (Enhanced v4)' | 'issue: the first example of the DSL reference';

/** A diagnostic: its class, and its line in the example's own file. */
export interface ReferenceDiagnostic {
  readonly class: string;
  readonly line?: number;
  readonly message?: string;
}

/** What the compiler and the embedded stack do with an example. */
export type ReferenceOutcome =
  /**
   * Validates, graphs, compiles to ASL asl-validator accepts, and runs to SUCCEEDED; `output` when it
   * is deterministic; `warnings` exactly these (default none).
   */
  | {
      readonly runs: true;
      readonly output?: unknown;
      readonly warnings?: readonly ReferenceDiagnostic[];
      /** Texts the run's output (as JSON, when not a string) contains, where it is not wholly deterministic. */
      readonly outputContains?: readonly string[];
      /** Steps of the example that are skipped (no output), e.g. a conditional's branch not taken. */
      readonly skipped?: readonly string[];
    }
  /** Refused before any run with this (first) error, because `why`. */
  | { readonly refused: ReferenceDiagnostic; readonly why: string };

/** One example. */
export interface ReferenceCase {
  /** The example's file in this folder. */
  readonly file: string;
  readonly source: ReferenceSource;
  /** The heading the example sits under in its source. */
  readonly section: string;
  /**
   * `document`: a whole document, used as it is. `steps`: entries of the `steps:` mapping (the
   * reference's step-type snippets). `sections`: top-level sections (`input:`, `chat_hints:`, `output:`).
   * Fragments are placed in the document wrapper the DSL Schema skill says every example assumes.
   */
  readonly form: 'document' | 'steps' | 'sections';
  /** Fragments: the agents, functions and MCP servers the fragment names, declared as `""` (the reference's form). */
  readonly declare?: {
    readonly agents?: readonly string[];
    readonly functions?: readonly string[];
    readonly mcp_servers?: readonly string[];
  };
  /** Fragments: steps (mapping form, two-space indented entries) that the fragment reads or waits for. Ours. */
  readonly context?: string;
  /** Fragments of `form: sections`: the steps that make it a workflow. Ours. */
  readonly steps?: string;
  /** The run's input. */
  readonly input: Readonly<Record<string, unknown>>;
  readonly outcome: ReferenceOutcome;
  /**
   * Set when the outcome differs from what GraphN does because Stepforge lacks something the
   * example uses (not because the example is not a whole document): what, precisely.
   */
  readonly gap?: string;
}

/** A step of ours that outputs `value` (the fixture function `reference_context` returns its input's `value`). */
const contextStep = (name: string, value: unknown) =>
  `  ${name}:\n    call: function\n    function: reference_context\n    input:\n      value: ${JSON.stringify(value)}\n`;

const SCHEMA: ReferenceSource = 'Skill: DSL Schema';
const BUILDING: ReferenceSource = 'Skill: Workflow Building (Enhanced v4)';

/** The wrapper every fragment is placed in (dsl-schema-01-document-wrapper.yaml). */
export const WRAPPER_FILE = 'dsl-schema-01-document-wrapper.yaml';

export const REFERENCE_CASES: readonly ReferenceCase[] = [
  {
    file: 'dsl-schema-02-full-schema.yaml',
    source: SCHEMA,
    section: 'Full DSL Schema (1.0.0)',
    form: 'document',
    input: { query: 'tide pools' },
    outcome: {
      refused: { class: 'unknown_step', line: 35 },
      why: 'the schema example waits for `after: [prev_step]`, a step it does not define (it shows the field, not a workflow)',
    },
  },
  {
    file: 'dsl-schema-03-input-schema.yaml',
    source: SCHEMA,
    section: 'Input Schema Best Practices',
    form: 'sections',
    declare: { agents: ['Researcher'] },
    steps: '  research:\n    call: agent\n    agent: Researcher\n    input_template: "Research ${input.query}"\n',
    input: { query: 'tide pools' },
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-04-output-key-convention.yaml',
    source: SCHEMA,
    section: 'Output Key Convention',
    form: 'sections',
    declare: { agents: ['Writer'] },
    steps: '  final_step:\n    call: agent\n    agent: Writer\n    input_template: "Write"\n',
    input: {},
    outcome: {
      refused: { class: 'yaml', line: 6, message: 'Map keys must be unique' },
      why: 'the example shows the right and the wrong `output:` one after the other, so the key is repeated: not one document',
    },
  },
  {
    file: 'dsl-schema-05-chat-hints.yaml',
    source: SCHEMA,
    section: 'chat_hints (Conversational UX)',
    form: 'sections',
    declare: { agents: ['Investigator'] },
    steps: '  investigate:\n    call: agent\n    agent: Investigator\n    input_template: "${input.alert}"\n',
    input: { alert: 'pod web-1 restarts' },
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-06-agent.yaml',
    source: SCHEMA,
    section: 'Step Types: agent',
    form: 'steps',
    declare: { agents: ['AgentName'] },
    input: { query: 'tide pools' },
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-07-function.yaml',
    source: SCHEMA,
    section: 'Step Types: function',
    form: 'steps',
    declare: { functions: ['my_function', 'reference_context'] },
    context: contextStep('prev', 'the previous output'),
    input: {},
    outcome: { runs: true, output: { text: 'the previous output', api_key: true } },
  },
  {
    file: 'dsl-schema-08-mcp-tool.yaml',
    source: SCHEMA,
    section: 'Step Types: mcp_tool',
    form: 'steps',
    declare: { mcp_servers: ['MyTools'] },
    input: { query: 'tide pools' },
    outcome: { runs: true, output: { status: 'success', query: 'tide pools', top_k: 5 } },
  },
  {
    file: 'dsl-schema-09-connector.yaml',
    source: SCHEMA,
    section: 'Step Types: connector',
    form: 'steps',
    declare: { functions: ['reference_context'] },
    context: contextStep('analysis', '3 alerts correlated'),
    input: {},
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-10-handoff-router.yaml',
    source: SCHEMA,
    section: 'Step Types: handoff_router',
    form: 'steps',
    declare: { agents: ['Triage_Agent', 'Order_Specialist', 'Returns_Specialist', 'Product_Advisor'] },
    input: { message: 'Where is my order?' },
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-11-parallel-analyzer.yaml',
    source: SCHEMA,
    section: 'Step Types: parallel_analyzer',
    form: 'steps',
    declare: { agents: ['Security_Analyst', 'Infrastructure_Analyst', 'Incident_Commander'] },
    input: { alert: 'CPU at 100% on db-1' },
    // Both analysts have role: analyst; the aggregator gets one `## <agent>` section per analyst.
    outcome: {
      runs: true,
      outputContains: [
        '## Security_Analyst\\n[offline:echo] Alert: CPU at 100% on db-1',
        '## Infrastructure_Analyst\\n[offline:echo] Alert: CPU at 100% on db-1',
      ],
    },
  },
  {
    file: 'dsl-schema-12-judge-loop.yaml',
    source: SCHEMA,
    section: 'Step Types: judge_loop',
    form: 'steps',
    declare: { agents: ['Writer', 'Critic'] },
    input: { topic: 'tide pools' },
    outcome: {
      refused: { class: 'unknown_step', line: 5 },
      why: "the snippet's pass_condition reads steps.refine, but the step is named step_name (its note says refine stands for the step's own name)",
    },
  },
  {
    file: 'dsl-schema-13-for-each.yaml',
    source: SCHEMA,
    section: 'Step Types: for_each',
    form: 'steps',
    declare: { functions: ['process_file'] },
    input: { files: ['a.pdf', 'b.pdf'] },
    outcome: { runs: true, output: [{ processed: 'a.pdf' }, { processed: 'b.pdf' }] },
  },
  {
    file: 'dsl-schema-14-while.yaml',
    source: SCHEMA,
    section: 'Step Types: while',
    form: 'steps',
    declare: { functions: ['fetch_page', 'check_complete'] },
    input: {},
    outcome: { runs: true },
  },
  {
    file: 'dsl-schema-15-conditional.yaml',
    source: SCHEMA,
    section: 'Step Types: conditional',
    form: 'steps',
    input: { include_summary: true },
    outcome: { runs: true, output: true },
  },
  {
    file: 'wf-building-01-step-secrets.yaml',
    source: BUILDING,
    section: 'Step 3e: Create Secrets',
    form: 'steps',
    declare: { functions: ['news_fetcher'] },
    input: { company: 'Acme' },
    outcome: { runs: true, output: { status: 'success', query: 'Acme', authorised: true } },
  },
  {
    file: 'wf-building-02-step-secrets-wrong.yaml',
    source: BUILDING,
    section: 'Step 3e: Create Secrets (WRONG)',
    form: 'steps',
    declare: { functions: ['news_fetcher'] },
    input: { company: 'Acme' },
    outcome: { runs: true, output: { status: 'success', query: 'Acme', authorised: false } },
  },
  {
    file: 'wf-building-03-dsl-skeleton.yaml',
    source: BUILDING,
    section: 'Step 3f: Write the DSL',
    form: 'document',
    input: { field_name: 'x' },
    outcome: {
      refused: { class: 'schema', line: 25 },
      why: 'the skeleton writes `call: <step_type>` as a placeholder for a step type',
    },
  },
  {
    file: 'wf-building-04-agent.yaml',
    source: BUILDING,
    section: 'Step Type Reference: agent',
    form: 'steps',
    declare: { agents: ['MyAgent'], functions: ['reference_context'] },
    context: contextStep('fetch', 'fetched page'),
    input: { data: 'error rate 4%' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-05-function.yaml',
    source: BUILDING,
    section: 'Step Type Reference: function',
    form: 'steps',
    declare: { functions: ['my_fetcher'] },
    input: { api_url: 'https://api.example.com/items' },
    outcome: { runs: true, output: { url: 'https://api.example.com/items', api_key: true } },
  },
  {
    file: 'wf-building-06-mcp-tool.yaml',
    source: BUILDING,
    section: 'Step Type Reference: mcp_tool',
    form: 'steps',
    declare: { mcp_servers: ['MyTools'] },
    input: { question: 'What is a tide pool?', kb_id: 'kb_docs' },
    outcome: { runs: true, output: { status: 'success', query: 'What is a tide pool?', kb_id: 'kb_docs', top_k: 8 } },
  },
  {
    file: 'wf-building-07-handoff-router.yaml',
    source: BUILDING,
    section: 'Step Type Reference: handoff_router',
    form: 'steps',
    declare: { agents: ['Triage', 'BillingAgent', 'TechAgent'] },
    input: { message: 'I was charged twice' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-08-parallel-analyzer.yaml',
    source: BUILDING,
    section: 'Step Type Reference: parallel_analyzer',
    form: 'steps',
    declare: { agents: ['SecurityReviewer', 'PerfReviewer', 'Synthesizer'] },
    input: { pr_diff: '+ eval(input)' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-09-judge-loop.yaml',
    source: BUILDING,
    section: 'Step Type Reference: judge_loop',
    form: 'steps',
    declare: { agents: ['Writer', 'Editor'] },
    input: { product: 'a tide-pool guide' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-10-for-each.yaml',
    source: BUILDING,
    section: 'Step Type Reference: for_each',
    form: 'steps',
    declare: { agents: ['Summarizer'], functions: ['fetcher'] },
    input: { urls: ['https://a.example', 'https://b.example'] },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-11-conditional-then-else.yaml',
    source: BUILDING,
    section: 'Step Type Reference: conditional',
    form: 'steps',
    declare: { agents: ['UrgentResponder', 'StandardResponder'], functions: ['reference_context'] },
    context: contextStep('triage', { severity: 'P1', summary: 'db-1 down' }),
    input: {},
    // The condition holds (severity P1): the then: step runs, the else: step is skipped, and the
    // conditional's output (`response`) is the urgent responder's.
    outcome: { runs: true, outputContains: ['[offline:echo] URGENT: '], skipped: ['route.else'] },
  },
  {
    file: 'wf-building-12-while.yaml',
    source: BUILDING,
    section: 'Step Type Reference: while',
    form: 'steps',
    declare: { agents: ['Checker'] },
    input: {},
    // The condition and the body read the while's own output: the first iteration sees none (blank in
    // the template), and the checker's answer has no needs_more, so it runs once.
    outcome: { runs: true, output: '[offline:echo] Check: ' },
  },
  {
    file: 'wf-building-13-connector.yaml',
    source: BUILDING,
    section: 'Step Type Reference: connector',
    form: 'steps',
    declare: { functions: ['reference_context'] },
    context: contextStep('analysis', { summary: 'all checks green' }),
    input: {},
    outcome: { runs: true },
  },
  {
    file: 'wf-building-14-pr-multi-angle-review.yaml',
    source: BUILDING,
    section: 'Worked Example: PR Review Workflow',
    form: 'document',
    input: { pr_diff: '+ eval(input)', pr_description: 'Adds a calculator' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-15-connector-after.yaml',
    source: BUILDING,
    section: 'Connectors',
    form: 'steps',
    declare: { functions: ['reference_context'] },
    context: contextStep('triage', { summary: 'db-1 down' }),
    input: {},
    outcome: { runs: true },
  },
  {
    file: 'wf-building-16-chat-hints.yaml',
    source: BUILDING,
    section: 'Designing for Chat Mode',
    form: 'sections',
    declare: { agents: ['DocAssistant'] },
    steps: '  answer:\n    call: agent\n    agent: DocAssistant\n    input_template: "${input.question}"\n',
    input: { question: 'What is a tide pool?' },
    outcome: { runs: true },
  },
  {
    file: 'wf-building-17-compound-outer-references.yaml',
    source: BUILDING,
    section: 'Debugging Failed Workflows: compound steps',
    form: 'steps',
    declare: { agents: ['Writer', 'Reviewer', 'Compiler'], functions: ['reference_context'] },
    context: contextStep('fetch', 'fetched') + contextStep('triage', 'P2'),
    input: {},
    outcome: {
      refused: { class: 'yaml', line: 16, message: 'Map keys must be unique' },
      why: 'the example shows the BAD and the GOOD `review` step one after the other, so the step name is repeated: not one document',
    },
  },
  {
    file: 'issue-01-ready-conditional.yaml',
    source: 'issue: the first example of the DSL reference',
    section: 'the issue\'s "Why"',
    form: 'document',
    input: {},
    outcome: { runs: true, output: true },
  },
];

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** The example's text, as the reference prints it. */
export function exampleText(file: string): string {
  return readFileSync(here(file), 'utf8');
}

/** The fragment's lines moved so that its least indented lines sit at `indent` spaces. */
function reindent(text: string, indent: number): string {
  const lines = text.replace(/\n+$/, '').split('\n');
  const least = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length));
  return lines.map((l) => (l.trim() === '' ? '' : ' '.repeat(indent) + l.slice(least))).join('\n') + '\n';
}

/**
 * The document a case runs: a whole-document example as it is; a fragment placed in the wrapper
 * (its `name:` the case's own display name, so each case is its own state machine), after the
 * declarations it needs, its context steps before it. `offset`: the lines before the example's
 * first line (a line of the example is line `offset + n` of the document).
 */
export function composeCase(c: ReferenceCase): { readonly text: string; readonly offset: number } {
  const example = exampleText(c.file);
  if (c.form === 'document') return { text: example, offset: 0 };
  const wrapper = exampleText(WRAPPER_FILE).replace(/^ {2}name: .*$/m, `  name: ${JSON.stringify(displayNameOf(c))}`);
  const declare = (key: string, names: readonly string[] | undefined) =>
    names && names.length > 0 ? `${key}:\n${names.map((n) => `  ${n}: ""`).join('\n')}\n` : '';
  const head =
    wrapper +
    declare('agents', c.declare?.agents) +
    declare('functions', c.declare?.functions) +
    declare('mcp_servers', c.declare?.mcp_servers);
  const before = c.form === 'sections' ? head : `${head}steps:\n${c.context ?? ''}`;
  const after = c.form === 'sections' ? `steps:\n${c.steps ?? ''}` : '';
  return { text: before + reindent(example, c.form === 'sections' ? 0 : 2) + after, offset: before.split('\n').length - 1 };
}

/** The document a case runs (composeCase's text). */
export function caseDocument(c: ReferenceCase): string {
  return composeCase(c).text;
}

/** A case's display name: where it comes from, as a person would say it. */
export function displayNameOf(c: ReferenceCase): string {
  const source = c.source === SCHEMA ? 'DSL Schema' : c.source === BUILDING ? 'Workflow Building v4' : 'issue';
  return `GraphN ${source} — ${c.section}`;
}
