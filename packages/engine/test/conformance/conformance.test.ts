// Runs every case of the AWS-recorded conformance corpus through the embedded interpreter.
// Every case either passes (end result and, where recorded, normalised history), is listed in
// expectedFailures.ts with a reason, or is reported as not run with a reason. Nothing is skipped silently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceEmulators, type ServiceEmulators } from '../resources/serviceCases.js';
import { EXPECTED_FAILURES } from './expectedFailures.js';
import { summarise } from './report.js';
import { corpusMissingReason, warnCorpusMissing } from './corpusDir.js';
import { loadCases, runCase, type CaseOutcome } from './runCase.js';

const missing = corpusMissingReason();
warnCorpusMissing(missing);

describe('Function: executeStateMachine (conformance corpus)', () => {
  // Without the corpus the suite shows as skipped, with where it looked, rather than as a pass.
  if (missing) {
    it.skip(`needs the corpus: ${missing}`, () => undefined);
    return;
  }

  let emulators: ServiceEmulators | undefined;
  beforeAll(async () => {
    emulators = await startServiceEmulators();
  });
  afterAll(async () => {
    await emulators?.close();
  });

  it('matches AWS end results and normalised histories for every case, except the reviewed list', async () => {
    const cases = loadCases();
    const outcomes: CaseOutcome[] = [];
    for (const c of cases) outcomes.push(await runCase(c, emulators));
    console.log(summarise(outcomes));

    const unexpected: string[] = [];
    const nowPassing: string[] = [];
    const notRun: string[] = [];
    for (const o of outcomes) {
      if (o.notRun) {
        notRun.push(`${o.file}: ${o.notRun}`);
        continue;
      }
      // SQS/DynamoDB/callback cases (category "services") race real emulator I/O against task timeouts;
      // they count in the rates here and are asserted case by case in test/resources/ServiceConformance.test.ts.
      if (o.category === 'services') continue;
      const listed = EXPECTED_FAILURES[o.file];
      const kind = !o.endOk ? 'end' : o.hasHistory && !o.historyOk ? 'history' : undefined;
      if (kind && (!listed || listed.kind !== kind)) {
        unexpected.push(
          `${o.file} (${kind}): ${JSON.stringify((kind === 'end' ? o.endMismatches : o.historyMismatches).slice(0, 2)).slice(0, 400)}`,
        );
      }
      if (!kind && listed) nowPassing.push(o.file);
    }
    for (const f of Object.keys(EXPECTED_FAILURES)) if (!outcomes.some((o) => o.file === f)) nowPassing.push(`${f} (no such case)`);

    expect(unexpected).toEqual([]);
    expect(nowPassing).toEqual([]);
    // With the emulators up, every case runs.
    expect(notRun).toEqual([]);
    const run = outcomes.filter((o) => !o.notRun);
    const endRate = run.filter((o) => o.endOk).length / run.length;
    const withHistory = run.filter((o) => o.hasHistory);
    const histRate = withHistory.filter((o) => o.historyOk).length / withHistory.length;
    expect(endRate).toBeGreaterThanOrEqual(0.99);
    expect(histRate).toBeGreaterThanOrEqual(0.95);
  });
});
