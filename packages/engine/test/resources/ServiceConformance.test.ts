import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareValues, skipPredicate, type Mismatch } from '../conformance/compare.js';
import { CORPUS_DIR, corpusMissingReason, warnCorpusMissing } from '../conformance/corpusDir.js';
import { compareHistory } from '../conformance/runCase.js';
import { runServiceCase, startServiceEmulators, type ServiceCase, type ServiceEmulators } from './serviceCases.js';

const DIR = join(CORPUS_DIR, 'cases', 'services');
const missing = corpusMissingReason(CORPUS_DIR, join('cases', 'services'));
warnCorpusMissing(missing);

interface Case extends ServiceCase {
  expect: { status: string; output: unknown; error: string | null; cause: string | null };
  snapshotSkipVerifyPaths: string[];
  history: Record<string, unknown>[] | null;
}

const cases: Case[] = missing
  ? []
  : readdirSync(DIR)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => ({ ...(JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Case), file: `services/${f}` }));

/**
 * Cases whose end result is known not to match, each with the reason. The test fails on a new
 * failure AND on an unexpected pass, so this list stays honest.
 */
const EXPECTED_FAILURES: Record<string, string> = {};
/** Cases whose normalised history is known not to match, with the reason (same rules as above). */
const EXPECTED_HISTORY_FAILURES: Record<string, string> = {};

function endMismatches(c: Case, result: Awaited<ReturnType<typeof runServiceCase>>): Mismatch[] {
  const out: Mismatch[] = [];
  const skip = skipPredicate(c.snapshotSkipVerifyPaths ?? []);
  if (result.status !== c.expect.status) out.push({ path: 'status', expected: c.expect.status, actual: result.status });
  if ((c.expect.error ?? undefined) !== result.error) out.push({ path: 'error', expected: c.expect.error, actual: result.error });
  if (c.expect.cause !== null || result.cause !== undefined) compareValues(c.expect.cause, result.cause, 'cause', out, skip);
  if (c.expect.status === 'SUCCEEDED') compareValues(c.expect.output, result.output, 'output', out, () => false);
  return out;
}

describe('Function: createTaskInvoker (services conformance, fauxqs + dynalite)', () => {
  // Without the corpus the suite shows as skipped, with where it looked, rather than as a pass.
  if (missing) {
    it.skip(`needs the corpus: ${missing}`, () => undefined);
    return;
  }
  let emu: ServiceEmulators;
  beforeAll(async () => {
    emu = await startServiceEmulators();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('has the services cases to run', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  for (const c of cases) {
    const name = c.file.replace('services/', '');
    it(`matches AWS's end result${c.history ? ' and history' : ''}: ${name}`, async () => {
      const result = await runServiceCase(c, emu);
      const mm = endMismatches(c, result);
      const known = EXPECTED_FAILURES[name];
      if (known !== undefined) expect(mm.length, `expected to fail (${known}) but passed`).toBeGreaterThan(0);
      else expect(mm).toEqual([]);
      if (c.history) {
        const hm = compareHistory(c.history, result.events, false, skipPredicate(c.snapshotSkipVerifyPaths ?? []));
        const knownH = EXPECTED_HISTORY_FAILURES[name];
        if (knownH !== undefined) expect(hm.length, `history expected to differ (${knownH}) but matched`).toBeGreaterThan(0);
        else expect(hm).toEqual([]);
      }
    });
  }
});
