// Cost report: for every example and deployed workflow, what one run does on AWS (state transitions,
// Lambda invocations, DynamoDB writes) and what a million runs cost at us-east-1 list prices, for
// Standard and Express. Counts come from running the compiled ASL on the embedded engine with scripted
// handler replies; prices and assumptions are in infra/lib/cost/pricing.ts and printed below.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { compileDocument } from '@stepforge/compiler';
import { estimateRunCost, sampleInput, type ManifestLike } from '../infra/lib/cost/estimateRunCost.js';
import { DYNAMO_ASSUMPTIONS, HANDLER_ASSUMPTIONS, RUN_ASSUMPTIONS, US_EAST_1 } from '../infra/lib/cost/pricing.js';
import { isWorkflowFile, loadWorkflow } from '../infra/lib/workflows/loadWorkflows.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const usd = (n: number) => (n >= 100 ? `$${n.toFixed(0)}` : `$${n.toFixed(2)}`);

/** Prints the cost table; never asserts. */
export default async function costBench(): Promise<void> {
  const files = ['examples', 'workflows'].flatMap((dir) => {
    try {
      return readdirSync(join(root, dir))
        .filter(isWorkflowFile)
        .sort()
        .map((f) => join(root, dir, f));
    } catch {
      return [];
    }
  });
  const rows: string[][] = [];
  const ratios: { file: string; ratio: number; strict: number }[] = [];
  for (const path of files) {
    const file = relative(root, path);
    const text = readFileSync(path, 'utf8');
    try {
      const spec = loadWorkflow(text, file, compileDocument);
      const doc = parse(text) as { input?: unknown };
      const est = await estimateRunCost(
        spec.asl as Record<string, unknown>,
        spec.manifest as ManifestLike,
        sampleInput(doc.input),
        spec.express,
      );
      // The same ratio with the loop-exit Passes in the numerator and skipped steps out of the denominator.
      const strictRuns = est.plainStepRuns - est.skippedStepRuns;
      const strict = strictRuns > 0 ? (est.transitions - est.agentLoopTransitions + est.agentLoopExitTransitions) / strictRuns : 0;
      ratios.push({ file, ratio: est.transitionsPerPlainStep, strict });
      const byHandler = Object.entries(est.invocationsByHandler)
        .map(([h, n]) => `${h}×${n}`)
        .join(' ');
      rows.push([
        file,
        spec.express ? 'Express' : 'Standard',
        est.status,
        String(est.transitions),
        `${est.lambdaInvocations} (${byHandler})`,
        String(est.dynamoWrites),
        `${est.transitions - est.agentLoopTransitions} / ${est.plainStepRuns}${est.skippedStepRuns > 0 ? ` (incl. ${est.skippedStepRuns} skipped)` : ''} = ${est.transitionsPerPlainStep.toFixed(2)} (+${est.agentLoopTransitions} loop)`,
        usd(est.perMillion.standard),
        usd(est.perMillion.express),
        usd(est.perMillion.lambda),
        usd(est.perMillion.dynamo),
        usd(est.perMillion.totalStandard),
        usd(est.perMillion.totalExpress),
      ]);
    } catch (e) {
      rows.push([file, '-', `error: ${(e as { code?: string }).code ?? (e as Error).message}`, ...Array(10).fill('-')]);
    }
  }
  const header = [
    'workflow',
    'deploys as',
    'scripted run',
    'transitions',
    'Lambda invocations',
    'DDB writes',
    'outside loops / plain runs',
    'SFN Std $/M',
    'SFN Exp $/M',
    'Lambda $/M',
    'DDB $/M',
    'total Std $/M',
    'total Exp $/M',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log('Cost per run and per million runs, us-east-1 list prices');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of rows) console.log(line(r));
  if (ratios.length > 0) {
    const values = ratios.map((r) => r.ratio);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const worst = ratios.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    console.log(`\nTransitions per plain step run — target: at most 2 per plain step, plus the agent loops' own states.`);
    console.log("  plain step run: one entry of a state doing a step's work outside agent loops: a Lambda Task (plain steps, and the");
    console.log(
      '    generator / evaluator / analyst / aggregator / hand-off agents of composite steps) or the Pass of a pure / conditional step;',
    );
    console.log('    or one time a step\'s `when` guard skipped it (shown as "incl. N skipped"); iterations count each time.');
    console.log(
      "  agent loop's own states: every state of a model step granted tools (its reason Task, tool-call Choice and Map, tool Tasks,",
    );
    console.log('    init Pass, and the Pass that ends a branch or the run after the loop, since a Choice cannot); excluded from the');
    console.log('    numerator and shown as "+N loop".');
    console.log('  numerator: every other transition (the work states plus Start, Output, Parallel, Map, guards, loop Choices, joins).');
    console.log(
      `  mean ${mean.toFixed(2)}, max ${worst.ratio.toFixed(2)} (${worst.file}) — target ≤ 2: ${mean <= 2 ? 'mean met' : 'mean NOT met'}, ${worst.ratio <= 2 ? 'max met' : 'max NOT met'}`,
    );
    const strict = ratios.map((r) => r.strict);
    console.log(
      `  without the two rules above that are ours (loop-exit Passes as loop states, skipped steps as visits): mean ${(strict.reduce((a, b) => a + b, 0) / strict.length).toFixed(2)}, max ${Math.max(...strict).toFixed(2)}`,
    );
    console.log(
      `  per workflow: ${ratios.map((r) => `${r.file.replace(/^.*\//, '').replace(/\.(chain\.)?ya?ml$/, '')} ${r.ratio.toFixed(2)}`).join(', ')}`,
    );
  }
  console.log(
    '\nPeer for comparison: a hand-written Standard state machine calling one Lambda per step needs 1 transition per step (Task) plus Start/End overhead.',
  );
  console.log('Assumptions:');
  console.log(
    `  Step Functions Standard $${(US_EAST_1.standardPerTransition * 1000).toFixed(3)}/1k transitions (StateEntered events, happy path, no retries, free tier ignored)`,
  );
  console.log(
    `  Step Functions Express $${(US_EAST_1.expressPerRequest * 1e6).toFixed(2)}/M requests + $${US_EAST_1.expressPerGbSecond}/GB-s at ${US_EAST_1.expressMemoryGb * 1024} MB, ${US_EAST_1.expressBillingIncrementMs} ms increments; duration = makespan with the handler durations below`,
  );
  console.log(
    `  Lambda $${(US_EAST_1.lambdaPerRequest * 1e6).toFixed(2)}/M requests + $${US_EAST_1.lambdaPerGbSecond}/GB-s (arm64); per invocation: ${Object.entries(
      HANDLER_ASSUMPTIONS,
    )
      .map(([h, a]) => `${h} ${a.durationMs} ms @ ${a.memoryMb} MB`)
      .join(', ')}`,
  );
  console.log(
    `  DynamoDB on-demand $${(US_EAST_1.dynamoPerWriteUnit * 1e6).toFixed(3)}/M WRU; writes = ${DYNAMO_ASSUMPTIONS.writesPerRun}/run + ${DYNAMO_ASSUMPTIONS.writesPerInvocation}/Lambda invocation + ${DYNAMO_ASSUMPTIONS.extraWritesPerModelTurn}/model turn (1 KB items); reads, storage, logs, X-Ray, API Gateway and model tokens not included`,
  );
  console.log(
    `  Scripted run: agent loops do ${RUN_ASSUMPTIONS.agentToolRounds} tool round of ${RUN_ASSUMPTIONS.toolCallsPerAgentRound} calls; array inputs have ${RUN_ASSUMPTIONS.arrayInputItems} items; conditions see output {risk: "low", pass: true}`,
  );
}
