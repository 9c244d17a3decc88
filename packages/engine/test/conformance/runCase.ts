// Runs one corpus case on the embedded interpreter and compares the end result and, where it
// was recorded, the normalised history with what AWS recorded.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLambdaInvoker, createVirtualClock, executeStateMachine, type HistoryEvent, type LambdaHandler } from '@stepforge/engine';
import { compareValues, skipPredicate, type Mismatch } from './compare.js';
import { conformanceLambda } from './lambdas.js';
import { fastClock, runServiceCase, type ServiceEmulators } from '../resources/serviceCases.js';

import { CORPUS_DIR } from './corpusDir.js';

export { CORPUS_DIR };

/** One case file as stored in the corpus. */
export interface ConformanceCase {
  id: string;
  file: string;
  category: string;
  queryLanguage: string;
  definition: Record<string, unknown>;
  input: unknown;
  lambdas: Record<string, string>;
  services: string[];
  stateMachineType: 'STANDARD' | 'EXPRESS';
  naming: { stateMachineName: string | null; stateMachineArn: string | null; executionArn: string | null; roleArn: string };
  expect: { status: string; output: unknown; error: string | null; cause: string | null };
  history: Record<string, unknown>[] | null;
  snapshotSkipVerifyPaths: string[];
  notes: string[];
  resources: { kind: string; value: string; partitionKey?: string }[];
}

/** Loads every case, sorted by file name. */
export function loadCases(dir = CORPUS_DIR): ConformanceCase[] {
  const out: ConformanceCase[] = [];
  const root = join(dir, 'cases');
  for (const cat of readdirSync(root).sort()) {
    for (const f of readdirSync(join(root, cat)).sort()) {
      if (!f.endsWith('.json')) continue;
      const c = JSON.parse(readFileSync(join(root, cat, f), 'utf8')) as ConformanceCase;
      c.file = `${cat}/${f}`;
      out.push(c);
    }
  }
  return out;
}

/** The outcome of one case. */
export interface CaseOutcome {
  file: string;
  category: string;
  /** undefined when the case was not run (with `notRun` saying why). */
  endOk?: boolean;
  historyOk?: boolean;
  hasHistory: boolean;
  notRun?: string;
  endMismatches: Mismatch[];
  historyMismatches: Mismatch[];
}

/**
 * Runs a case and compares. Cases needing SQS/DynamoDB/callback workers run on the emulators
 * (fauxqs + dynalite) when given, else report `notRun` with the reason.
 */
export async function runCase(c: ConformanceCase, emulators?: ServiceEmulators): Promise<CaseOutcome> {
  const base: CaseOutcome = {
    file: c.file,
    category: c.category,
    hasHistory: c.history !== null,
    endMismatches: [],
    historyMismatches: [],
  };
  if (c.services.length > 0 && !emulators)
    return { ...base, notRun: `needs ${c.services.join('+')} task resources: run with the fauxqs/dynalite emulators` };
  const clock = c.services.length > 0 ? fastClock() : createVirtualClock(Date.UTC(2024, 0, 1));
  const handlers: Record<string, LambdaHandler> = {};
  for (const [key, kind] of Object.entries(c.lambdas)) {
    const h = conformanceLambda(kind, clock);
    if (!h) return { ...base, notRun: `unknown Lambda kind ${kind}` };
    handlers[key] = h;
  }
  const smName = c.naming.stateMachineName ?? '<ArnPart_0idx>';
  const smArn = c.naming.stateMachineArn ?? `arn:<partition>:states:<region>:111111111111:stateMachine:${smName}`;
  // Express sync executions are named `<SyncExecArn_Part1_0idx>` with a second ARN part appended.
  const express = c.stateMachineType === 'EXPRESS';
  const execArn =
    c.naming.executionArn ??
    (express
      ? `${smArn.replace(':stateMachine:', ':express:')}:<SyncExecArn_Part1_0idx>:<SyncExecArn_Part2_0idx>`
      : `${smArn.replace(':stateMachine:', ':execution:')}:<ExecArnPart_0idx>`);
  const execName = express ? '<SyncExecArn_Part1_0idx>' : execArn.split(':').pop()!;
  // The recorded functions are Python 3.12 handlers (lambdas.md): errors and results reach the state machine as that runtime sends them.
  const invoker = createLambdaInvoker(handlers, {
    partition: '<partition>',
    region: '<region>',
    account: '111111111111',
    runtime: 'python',
  });
  let result;
  try {
    result =
      emulators && c.services.length > 0
        ? await runServiceCase({ ...c, file: c.file }, emulators, handlers)
        : await executeStateMachine(c.definition, c.input, {
            invoker,
            clock,
            partition: '<partition>',
            region: '<region>',
            account: '111111111111',
            stateMachineName: smName,
            stateMachineArn: smArn,
            executionArn: execArn,
            executionName: execName,
            roleArn: c.naming.roleArn,
            stateMachineType: c.stateMachineType,
          });
  } catch (e) {
    const m: Mismatch = { path: 'run', expected: c.expect.status, actual: `${(e as Error).name}: ${(e as Error).message}` };
    return { ...base, endOk: false, historyOk: c.history ? false : undefined, endMismatches: [m] } as CaseOutcome;
  }
  const skip = skipPredicate(c.snapshotSkipVerifyPaths);
  const endMismatches: Mismatch[] = [];
  if (result.status !== c.expect.status) endMismatches.push({ path: 'status', expected: c.expect.status, actual: result.status });
  if ((c.expect.error ?? undefined) !== result.error) endMismatches.push({ path: 'error', expected: c.expect.error, actual: result.error });
  if (c.expect.cause !== null || result.cause !== undefined) {
    // A Fail state with an empty Cause records "" in the describe output; we omit it like the history does.
    if (!(c.expect.cause === '' && result.cause === undefined)) compareValues(c.expect.cause, result.cause, 'cause', endMismatches, skip);
  }
  if (c.expect.status === 'SUCCEEDED') compareValues(c.expect.output, result.output, 'output', endMismatches, () => false);
  const out: CaseOutcome = { ...base, endOk: endMismatches.length === 0, endMismatches };
  if (c.history) {
    const hm = compareHistory(
      c.history,
      result.events,
      c.notes.some((n) => n.includes('sorted')),
      skip,
    );
    out.historyOk = hm.length === 0;
    out.historyMismatches = hm;
  }
  return out;
}

function stripIds(e: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, previousEventId: _p, timestamp: _t, ...rest } = e;
  return rest;
}

/** Compares histories event by event; runs of events the recorder sorted (id `[0]`) match as a multiset. */
export function compareHistory(
  expected: Record<string, unknown>[],
  actualEvents: readonly HistoryEvent[],
  sorted: boolean,
  skip: (p: string) => boolean,
): Mismatch[] {
  const actual = sorted
    ? actualEvents.filter((e) => e.type !== 'ParallelStateSucceeded' && e.type !== 'ParallelStateFailed')
    : [...actualEvents];
  const out: Mismatch[] = [];
  let i = 0;
  let j = 0;
  while (i < expected.length && j < actual.length) {
    const e = expected[i]!;
    if (Array.isArray(e.id)) {
      let k = i;
      while (k < expected.length && Array.isArray(expected[k]!.id)) k++;
      const group = expected.slice(i, k);
      const pool = actual.slice(j, j + group.length);
      const used = new Set<number>();
      group.forEach((g, gi) => {
        const hit = pool.findIndex((a, ai) => {
          if (used.has(ai)) return false;
          const mm: Mismatch[] = [];
          compareValues(stripIds(g), stripIds(a as Record<string, unknown>), `events[${i + gi}]`, mm, skip);
          return mm.length === 0;
        });
        if (hit < 0) out.push({ path: `events[${i + gi}]`, expected: g, actual: '(no matching event in the sorted group)' });
        else used.add(hit);
      });
      i = k;
      j += group.length;
      continue;
    }
    const mm: Mismatch[] = [];
    compareValues(e, actual[j], `events[${i}]`, mm, skip);
    out.push(...mm);
    i++;
    j++;
  }
  if (expected.length - i !== actual.length - j) {
    out.push({ path: 'events.length', expected: expected.length, actual: actual.length - (j - i) });
  }
  return out;
}
