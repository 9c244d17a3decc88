// Prints the conformance report: pass rates per category and every case that does not pass.
// Run: npx tsx packages/engine/test/conformance/report.ts [filter] [--verbose]
import { loadCases, runCase, type CaseOutcome } from './runCase.js';
import { startServiceEmulators } from '../resources/serviceCases.js';

/** Runs every case (optionally filtered by a substring of its file name), services cases on local emulators. */
export async function runAll(filter?: string): Promise<CaseOutcome[]> {
  const cases = loadCases().filter((c) => !filter || c.file.includes(filter));
  const emulators = cases.some((c) => c.services.length > 0) ? await startServiceEmulators() : undefined;
  const out: CaseOutcome[] = [];
  try {
    for (const c of cases) out.push(await runCase(c, emulators));
  } finally {
    await emulators?.close();
  }
  return out;
}

/** Formats per-category pass rates for end results and histories. */
export function summarise(outcomes: readonly CaseOutcome[]): string {
  const cats = new Map<string, { n: number; run: number; end: number; hist: number; histN: number }>();
  for (const o of outcomes) {
    const s = cats.get(o.category) ?? { n: 0, run: 0, end: 0, hist: 0, histN: 0 };
    s.n++;
    if (!o.notRun) {
      s.run++;
      if (o.endOk) s.end++;
      if (o.hasHistory) {
        s.histN++;
        if (o.historyOk) s.hist++;
      }
    }
    cats.set(o.category, s);
  }
  const pct = (a: number, b: number) => (b === 0 ? '   -  ' : `${((100 * a) / b).toFixed(1).padStart(5)}%`);
  const lines = ['category             cases  run  end-results        histories'];
  const tot = { n: 0, run: 0, end: 0, hist: 0, histN: 0 };
  for (const [cat, s] of [...cats].sort()) {
    lines.push(
      `${cat.padEnd(20)} ${String(s.n).padStart(5)} ${String(s.run).padStart(4)}  ${String(s.end).padStart(4)}/${String(s.run).padEnd(4)} ${pct(s.end, s.run)}  ${String(s.hist).padStart(4)}/${String(s.histN).padEnd(4)} ${pct(s.hist, s.histN)}`,
    );
    for (const k of Object.keys(tot) as (keyof typeof tot)[]) tot[k] += s[k];
  }
  lines.push(
    `${'TOTAL'.padEnd(20)} ${String(tot.n).padStart(5)} ${String(tot.run).padStart(4)}  ${String(tot.end).padStart(4)}/${String(tot.run).padEnd(4)} ${pct(tot.end, tot.run)}  ${String(tot.hist).padStart(4)}/${String(tot.histN).padEnd(4)} ${pct(tot.hist, tot.histN)}`,
  );
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('report.ts')) {
  const args = process.argv.slice(2);
  const verbose = args.includes('--verbose');
  const filter = args.find((a) => !a.startsWith('--'));
  const t0 = Date.now();
  const outcomes = await runAll(filter);
  for (const o of outcomes) {
    if (o.notRun) {
      if (verbose) console.log(`NOT RUN ${o.file}: ${o.notRun}`);
      continue;
    }
    if (!o.endOk) console.log(`END  ${o.file}\n     ${JSON.stringify(o.endMismatches.slice(0, 3)).slice(0, verbose ? 3000 : 600)}`);
    else if (o.hasHistory && !o.historyOk)
      console.log(`HIST ${o.file}\n     ${JSON.stringify(o.historyMismatches.slice(0, 3)).slice(0, verbose ? 3000 : 600)}`);
  }
  console.log(summarise(outcomes));
  console.log(`(${outcomes.length} cases in ${Date.now() - t0} ms)`);
}
