import { type StepProgress, type StepState, readableCause, truncate } from '@stepforge/runtime';

export { truncate };

const MARK: Record<StepState, string> = { pending: '·', running: '▸', succeeded: '✓', failed: '✗', skipped: '-' };

/** One step's line: mark, name (indented under its parent), state, duration, tokens. */
export function formatStepLine(p: StepProgress, depth = 0, runReused = false): string {
  const name = `${'  '.repeat(depth)}${p.id}`;
  const state = p.state === 'succeeded' && (p.reused || runReused) ? 'reused' : p.state;
  const parts = [`  ${MARK[p.state]} ${name.padEnd(28)} ${state.padEnd(9)}`];
  if (p.durationMs !== undefined && p.state !== 'pending' && p.state !== 'skipped') parts.push(formatMs(p.durationMs).padStart(8));
  if (p.inputTokens + p.outputTokens > 0) parts.push(`  tokens ${p.inputTokens}→${p.outputTokens}`);
  if (p.error) parts.push(`  ${p.error.error}: ${truncate(readableCause(p.error.cause), 100)}`);
  return parts.join('').trimEnd();
}

/** `12 ms`, `1.4 s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Depth of each step under its parents (nested steps print indented). */
function depthOf(p: StepProgress, byId: Map<string, StepProgress>): number {
  let d = 0;
  let cur = p.parent;
  while (cur !== undefined && d < 10) {
    d++;
    cur = byId.get(cur)?.parent;
  }
  return d;
}

/**
 * Live progress. On a TTY the block of step lines is redrawn in place (cursor up, clear); on
 * anything else each change of a step's state prints one plain line, so logs stay readable.
 */
export class ProgressDisplay {
  #drawnLines = 0;
  readonly #printed = new Map<string, string>();

  /** `runReused`: the whole run is an earlier run returned for its idempotency key. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
    private readonly runReused = false,
  ) {}

  update(steps: readonly StepProgress[]): void {
    const byId = new Map(steps.map((s) => [s.id, s]));
    if (this.tty) {
      const lines = steps.map((s) => formatStepLine(s, depthOf(s, byId), this.runReused));
      const up = this.#drawnLines > 0 ? `\x1b[${this.#drawnLines}F\x1b[J` : '';
      this.write(up + lines.join('\n') + '\n');
      this.#drawnLines = lines.length;
      return;
    }
    for (const s of steps) {
      // Plain output: one line per state change, pending steps are not news.
      if (s.state === 'pending') continue;
      const key = `${s.state}${s.reused ? '+reused' : ''}`;
      if (this.#printed.get(s.id) === key) continue;
      this.#printed.set(s.id, key);
      this.write(formatStepLine(s, depthOf(s, byId), this.runReused) + '\n');
    }
  }
}
