import type { StepEnvelopeInput } from '@stepforge/contract';

let seq = 0;

/** A valid step envelope for tests (version 1), with overrides. */
export function envelope(p: {
  kind: StepEnvelopeInput['step']['kind'];
  step?: string;
  runId?: string;
  config?: Record<string, unknown>;
  inputs?: StepEnvelopeInput['inputs'];
  tools?: string[];
  secrets?: string[];
  budget?: StepEnvelopeInput['budget'];
  turn?: StepEnvelopeInput['turn'];
  toolCall?: StepEnvelopeInput['toolCall'];
  iteration?: number[];
}): StepEnvelopeInput {
  return {
    version: 1,
    run: { id: p.runId ?? `run-${Date.now().toString(36)}-${seq++}`, workflow: 'test-wf' },
    step: { id: p.step ?? 'step', kind: p.kind, identity: `id-${p.step ?? 'step'}`, iteration: p.iteration ?? [] },
    config: p.config ?? {},
    inputs: p.inputs ?? {},
    tools: p.tools ?? [],
    secrets: p.secrets ?? [],
    ...(p.budget ? { budget: p.budget } : {}),
    ...(p.turn ? { turn: p.turn } : {}),
    ...(p.toolCall ? { toolCall: p.toolCall } : {}),
  };
}
