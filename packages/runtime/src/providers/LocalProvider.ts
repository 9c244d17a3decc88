import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ModelProvider, ModelRequest, ModelResponse } from './ModelProvider.js';

/** One scripted turn. */
const ScriptTurn = z.strictObject({
  text: z.string().default(''),
  toolCalls: z.array(z.strictObject({ id: z.string().optional(), tool: z.string(), args: z.unknown().default({}) })).default([]),
});

/**
 * A local provider script: per step id, the turns it answers in order (`"*"` for any other step).
 * After the last scripted turn a step gets an echo answer.
 */
export const LocalScript = z.strictObject({
  steps: z.record(z.string(), z.array(ScriptTurn)).default({}),
});
/** A local provider script. */
export type LocalScript = z.infer<typeof LocalScript>;

/**
 * The deterministic offline provider: scripted answers (from a fixture) or echo. Every answer
 * is labelled `[offline:script]` / `[offline:echo]` and reports provider `local` — it is never
 * presented as a real model. A consensus judge (`select: verbatim`) that no script answers gets
 * the most frequent candidate (ties: the first), verbatim as the check demands — so it carries
 * the candidate's own label — and reports model `local:select`.
 */
export class LocalProvider implements ModelProvider {
  readonly name = 'local';
  readonly #script?: LocalScript;

  constructor(script?: LocalScript | string) {
    if (typeof script === 'string') {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(script, 'utf8'));
      } catch (e) {
        throw new RuntimeError('ConfigError', `cannot read local provider script ${script}: ${(e as Error).message}`);
      }
      const parsed = LocalScript.safeParse(raw);
      if (!parsed.success)
        throw new RuntimeError(
          'ConfigError',
          `local provider script ${script}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      this.#script = parsed.data;
    } else {
      this.#script = script;
    }
  }

  async converse(req: ModelRequest): Promise<ModelResponse> {
    const turn = req.turn ?? req.messages.filter((m) => m.role === 'assistant').length;
    const turns = this.#script?.steps[req.stepId ?? ''] ?? this.#script?.steps['*'];
    const scripted = turns?.[turn];
    const inputTokens = Math.ceil(req.messages.reduce((n, m) => n + m.content.length, (req.system ?? '').length) / 4);
    if (scripted) {
      const text = `[offline:script] ${scripted.text}`.trimEnd();
      return {
        text,
        toolCalls: scripted.toolCalls.map((c, i) => ({ id: c.id ?? `call_${turn}_${i}`, tool: c.tool, args: c.args })),
        usage: { inputTokens, outputTokens: Math.ceil(text.length / 4) },
        provider: 'local',
        model: `local:script`,
        stopReason: scripted.toolCalls.length > 0 ? 'tool_use' : 'end_turn',
      };
    }
    const chosen = pickCandidate(req.selectFrom);
    if (chosen !== undefined) {
      return {
        text: chosen,
        toolCalls: [],
        usage: { inputTokens, outputTokens: Math.ceil(chosen.length / 4) },
        provider: 'local',
        model: 'local:select',
        stopReason: 'end_turn',
      };
    }
    const lastUser = [...req.messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
    const text = `[offline:echo] ${lastUser?.content ?? ''}`;
    return {
      text,
      toolCalls: [],
      usage: { inputTokens, outputTokens: Math.ceil(text.length / 4) },
      provider: 'local',
      model: 'local:echo',
      stopReason: 'end_turn',
    };
  }
}

/** The most frequent text candidate, the first of the most frequent on a tie; undefined when none is text. */
function pickCandidate(candidates: readonly unknown[] | undefined): string | undefined {
  const texts = (candidates ?? []).filter((c): c is string => typeof c === 'string');
  let best: string | undefined;
  let bestCount = 0;
  for (const t of texts) {
    const n = texts.filter((x) => x === t).length;
    if (n > bestCount) {
      best = t;
      bestCount = n;
    }
  }
  return best;
}
