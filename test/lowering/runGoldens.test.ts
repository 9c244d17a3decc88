import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { caseName, compileCase, goldenCases } from '../../packages/compiler/test/golden/goldenCases.js';
import { defaultAnswer, runScripted, type Script } from './scriptedRuntime.js';

const EXPECTED = join(dirname(fileURLToPath(import.meta.url)), 'expected');
const update = process.env.UPDATE_GOLDEN === '1';

/** Inputs per case (absent: `{}`), and scripts for the cases that need them to succeed. */
const INPUTS: Record<string, unknown> = {
  'c01-sequence': { topic: 'tides' },
  'c02-fan-out-in': { topic: 'tides' },
  'c05-tool-connector': { url: 'http://example.test' },
  'c08-consensus-judge': { task: '2+2' },
  'd16-minimal': { topic: 'owls' },
  'd19-when': { severity: 4 },
  'd20-for-each': { urls: ['u1', 'u2', 'u3'] },
  'd21-for-each-cap': { items: [1, 2, 3, 4] },
  'd23-parallel-analyzer': { ticker: 'ACME' },
  'd24-handoff': { message: 'refund please' },
  'd29-nested-loops': { matrix: [[1, 2], [3]] },
  'd30-output-mapping': { text: 'hello' },
  'd32-nested-outer-ref': { tasks: ['t1', 't2'] },
  'd33-after-when-retry': { go: true },
};
const SCRIPTS: Record<string, Record<string, Script>> = {
  // The judge answers with the second candidate, verbatim (its prompt places every candidate).
  'c08-consensus-judge': { judge: (env) => ({ output: /2: (.*) 3: /.exec(String(env.inputs.value))![1] }) },
  'c09-majority': { v1: () => ({ output: 'yes' }), v2: () => ({ output: 'no' }), v3: () => ({ output: 'no' }) },
  'c15-pure-chain': {
    seed: (env) =>
      env.toolCall
        ? defaultAnswer(env)
        : env.turn!.index === 0
          ? { done: false, toolCalls: [{ id: 'c0', tool: 'search', args: {} }] }
          : { done: true, output: 21 },
  },
};

/** What a run is compared on: status, output or error, and the sorted list of Lambda calls. */
function summary(run: Awaited<ReturnType<typeof runScripted>>) {
  return {
    status: run.result.status,
    ...(run.result.status === 'SUCCEEDED' ? { output: run.result.output } : { error: run.result.error, cause: run.result.cause }),
    calls: run.calls
      .map((c) => `${c.step.id}${c.step.role ? `/${c.step.role}` : ''}${c.step.iteration.length ? `[${c.step.iteration.join(',')}]` : ''}`)
      .sort(),
  };
}

describe('Function: executeStateMachine on compiled goldens (scripted handlers)', () => {
  for (const file of goldenCases()) {
    const name = caseName(file);
    it(`runs ${name} and matches its recorded outcome`, async () => {
      const run = await runScripted(compileCase(file), INPUTS[name] ?? {}, SCRIPTS[name]);
      const actual = summary(run);
      const path = join(EXPECTED, `${name}.run.json`);
      if (update || !existsSync(path)) writeFileSync(path, JSON.stringify(actual, null, 2) + '\n');
      expect(actual).toEqual(JSON.parse(readFileSync(path, 'utf8')));
      if (name !== 'c12-budget') expect(actual.status).toBe('SUCCEEDED');
    });
  }
});
