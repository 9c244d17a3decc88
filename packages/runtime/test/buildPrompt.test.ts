import { StepEnvelope } from '@stepforge/contract';
import { describe, expect, it } from 'vitest';
import { buildPrompt } from '../src/steps/modelStep.js';
import { envelope } from './envelope.js';

const steps = { draft: 'the draft', critique: 'the critique' };

describe('Function: buildPrompt', () => {
  it('appends, for envelope version 1, the read steps the template does not place', () => {
    const env = StepEnvelope.parse(
      envelope({ kind: 'model', inputs: { value: 'Revise: the draft', template: 'Revise: ${steps.draft.output}', steps } }),
    );
    const prompt = buildPrompt(env);
    expect(prompt).toContain('--- Output of step "critique" ---\nthe critique');
    expect(prompt).not.toContain('Output of step "draft"');
  });

  it("puts an analyst's focus before the shared input", () => {
    const env = StepEnvelope.parse({
      ...envelope({
        kind: 'agent',
        config: { agent: 'sec', role: 'sec', focus: 'security vulnerabilities' },
        inputs: { value: 'the diff', steps: {} },
      }),
      version: 2,
    });
    expect(buildPrompt(env)).toBe('Focus: security vulnerabilities\n\nthe diff');
    const plain = StepEnvelope.parse({
      ...envelope({ kind: 'agent', config: { agent: 'sec', role: 'sec' }, inputs: { value: 'the diff', steps: {} } }),
      version: 2,
    });
    expect(buildPrompt(plain)).toBe('the diff');
  });

  it('appends, for envelope version 2, every step the compiler sent (it already left out the placed ones)', () => {
    const env = StepEnvelope.parse({
      ...envelope({ kind: 'model', inputs: { value: 'Revise: the draft', steps: { critique: 'the critique' } } }),
      version: 2,
    });
    expect(buildPrompt(env)).toBe('Revise: the draft\n\nContext from earlier steps:\n--- Output of step "critique" ---\nthe critique');
  });
});
