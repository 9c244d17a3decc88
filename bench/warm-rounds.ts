// Rounds of the run benchmark's warm measurement, for comparing two trees on a host whose speed
// moves by more than the difference (this 2-core VM's does, by ±20 % within minutes): run it in
// each tree in turn, a few times, interleaved, and compare the rounds. Not a benchmark (nothing is
// compared here and no target is checked); `npm run bench -- run` is the one held to the targets.
//
//   node --import tsx bench/warm-rounds.ts            # W=200 warm-up runs, then ROUNDS=3 of R=80
//   W=200 R=60 ROUNDS=3 node --import tsx bench/warm-rounds.ts
//
// Each round prints its mean ms per step (wall) and the main thread's CPU ms per step (Linux).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStack } from '../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../packages/embedded/src/RunService.js';
import { FIVE_STEP_CHAIN as DOC, FIVE_STEPS as STEPS } from './support/fiveStepChain.js';
import { mainThreadCpuMs } from './support/mainThreadCpuMs.js';

const W = Number(process.env.W ?? 200);
const R = Number(process.env.R ?? 80);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'sf-warm-rounds-'));
const stack = await openStack({ projectDir: dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
try {
  const service = new EmbeddedRunService(stack, dir);
  const { entry } = await service.catalog.registerText(DOC, 'bench-five.chain.yaml');
  const once = async (i: number) => {
    const { run } = await service.start(entry, { topic: `t${i}` });
    const done = await service.wait(run.runId);
    if (done.status !== 'SUCCEEDED') throw new Error(`run ${run.runId} ${done.status}: ${done.error?.message}`);
  };
  for (let i = 0; i < W; i++) await once(-i - 1);
  for (let r = 0; r < ROUNDS; r++) {
    const cpu0 = mainThreadCpuMs();
    const t0 = performance.now();
    for (let i = 0; i < R; i++) await once(r * R + i);
    const wall = (performance.now() - t0) / R / STEPS;
    const cpu1 = mainThreadCpuMs();
    const main = cpu0 !== undefined && cpu1 !== undefined ? ` main ${((cpu1 - cpu0) / R / STEPS).toFixed(2)}` : '';
    console.log(`round ${r + 1}: ms/step ${wall.toFixed(2)}${main}`);
  }
} finally {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
}
