// The offline provider answers a consensus judge (`select: verbatim`) with one of its candidates,
// verbatim, so a consensus shape runs offline; a script still wins, and echo is for every other step.
import { describe, expect, it } from 'vitest';
import { LocalProvider } from '../src/providers/LocalProvider.js';

const ask = (p: LocalProvider, extra: { selectFrom?: unknown[]; stepId?: string } = {}) =>
  p.converse({
    model: 'local:any',
    messages: [{ role: 'user', content: 'Select the best candidate verbatim.' }],
    tools: [],
    stepId: 'judge',
    ...extra,
  });

describe('Class: LocalProvider', () => {
  describe('Method: converse', () => {
    it('answers a select-verbatim judge with the most frequent candidate, verbatim, as model local:select', async () => {
      const r = await ask(new LocalProvider(), { selectFrom: ['[offline:echo] Lyon', '[offline:echo] Paris', '[offline:echo] Paris'] });
      expect([r.text, r.provider, r.model, r.toolCalls]).toEqual(['[offline:echo] Paris', 'local', 'local:select', []]);
    });

    it('breaks a tie with the first candidate and skips candidates that are not text', async () => {
      expect((await ask(new LocalProvider(), { selectFrom: [{ n: 1 }, 'b', 'a'] })).text).toBe('b');
    });

    it('echoes when there is no text candidate, and lets a script answer the judge', async () => {
      expect((await ask(new LocalProvider(), { selectFrom: [1, 2] })).text).toBe('[offline:echo] Select the best candidate verbatim.');
      const scripted = new LocalProvider({ steps: { judge: [{ text: 'Paris', toolCalls: [] }] } });
      expect((await ask(scripted, { selectFrom: ['x', 'x'] })).text).toBe('[offline:script] Paris');
    });
  });
});
