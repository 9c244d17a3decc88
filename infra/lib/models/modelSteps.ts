// The model calls a compiled workflow makes, read from its ASL: every Task that invokes the model
// handler carries the step's configuration in its payload, and the model it names is what the
// handler will call (the runtime's own modelSettings rule: the step's `model`, else its agent's).
import { modelSettings } from '@stepforge/runtime';
import type { SourceLocation } from '@stepforge/contract';
import type { WorkflowSpec } from '../workflows/WorkflowSpec.js';

/** One model call site: a state of a workflow that invokes the model handler. */
export interface ModelStep {
  readonly workflow: string;
  readonly file: string;
  /** The step id (the manifest's), or the state name when the payload names none. */
  readonly step: string;
  readonly state: string;
  /** The step's `model` string as the handler receives it; undefined when it names none. */
  readonly model?: string;
  readonly location?: SourceLocation;
}

const MODEL_HANDLER = '${ModelStepFunctionArn}';

/** Every model call site of `wf`, in state order (Parallel branches and Map bodies included). */
export function modelSteps(wf: Pick<WorkflowSpec, 'name' | 'file' | 'asl' | 'manifest'>): ModelStep[] {
  const locations = new Map<string, SourceLocation>();
  const manifestSteps = (wf.manifest as { steps?: unknown }).steps;
  if (Array.isArray(manifestSteps)) {
    for (const s of manifestSteps as { id?: unknown; location?: SourceLocation }[]) {
      if (typeof s.id === 'string' && s.location) locations.set(s.id, s.location);
    }
  }
  const out: ModelStep[] = [];
  const visit = (states: unknown): void => {
    if (states === null || typeof states !== 'object') return;
    for (const [name, state] of Object.entries(states as Record<string, Record<string, unknown>>)) {
      const args = (state['Arguments'] ?? state['Parameters']) as Record<string, unknown> | undefined;
      if (state['Type'] === 'Task' && args && args['FunctionName'] === MODEL_HANDLER) {
        const payload = (args['Payload'] ?? {}) as { step?: { id?: unknown }; config?: unknown };
        const config = payload.config !== null && typeof payload.config === 'object' ? (payload.config as Record<string, unknown>) : {};
        const model = modelSettings(config).model;
        const step = typeof payload.step?.id === 'string' ? payload.step.id : name;
        const location = locations.get(step);
        out.push({
          workflow: wf.name,
          file: wf.file,
          step,
          state: name,
          ...(typeof model === 'string' && model !== '' ? { model } : {}),
          ...(location ? { location } : {}),
        });
      }
      for (const branch of (state['Branches'] as { States?: unknown }[] | undefined) ?? []) visit(branch.States);
      visit((state['ItemProcessor'] as { States?: unknown } | undefined)?.States);
      visit((state['Iterator'] as { States?: unknown } | undefined)?.States);
    }
  };
  visit((wf.asl as { States?: unknown }).States);
  return out;
}
