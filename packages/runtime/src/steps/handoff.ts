// A handoff_router's agents hand off by answering with a structured choice, and the state machine
// routes on `{"handoff": "<role>"}` in the agent's output. A model answers with text or tool calls,
// so the model handler turns either into that object: a call of one of the `transfer_to_<role>`
// tools it offers the agent, or JSON in the text (bare, fenced, or inside prose) naming a role.
import type { StepEnvelope } from '@stepforge/contract';
import { providerToolName, type ModelResponse, type ModelTool } from '../providers/ModelProvider.js';
import { isRecord } from './isRecord.js';

/** A specialist an agent may hand off to: its role (what the router matches), agent and tool name. */
export interface HandoffTarget {
  readonly role: string;
  readonly agent: string;
  readonly tool: string;
}

/** What a handing-off agent's output becomes: the role, and whatever else the agent said. */
export interface HandoffChoice {
  readonly handoff: string;
  readonly [field: string]: unknown;
}

const TOOL_PREFIX = 'transfer_to_';
/** Providers accept tool names of at most 64 characters. */
const MAX_TOOL_NAME = 64;

/**
 * The specialists the envelope's agent may hand off to: for the entry agent of a handoff_router, all
 * of them; for a specialist, the others. Empty for any other step.
 */
export function handoffTargets(env: StepEnvelope): HandoffTarget[] {
  const list = env.config.specialists;
  const role = env.step.role;
  if (env.step.kind !== 'agent' || !Array.isArray(list) || role === undefined) return [];
  const specialists = list.filter(
    (s): s is { agent: string; role: string } => isRecord(s) && typeof s.role === 'string' && typeof s.agent === 'string',
  );
  if (role !== 'entry' && !specialists.some((s) => s.role === role)) return [];
  const taken = new Set<string>();
  return specialists
    .filter((s) => s.role !== role)
    .map((s) => {
      // Roles are free text ("invoices and refunds"): the tool name keeps what providers accept, unique.
      const base = `${TOOL_PREFIX}${providerToolName(s.role)}`.slice(0, MAX_TOOL_NAME);
      let tool = base;
      for (let i = 2; taken.has(tool); i++) tool = `${base.slice(0, MAX_TOOL_NAME - String(i).length - 1)}_${i}`;
      taken.add(tool);
      return { role: s.role, agent: s.agent, tool };
    });
}

/** The `transfer_to_<role>` tools offered to a handing-off agent. */
export function handoffTools(targets: readonly HandoffTarget[]): ModelTool[] {
  return targets.map((t) => ({
    name: t.tool,
    description: `Hand the request over to the specialist for "${t.role}" (agent ${t.agent}) instead of answering it yourself. Call it with no other tool, and say why in "reason".`,
    inputSchema: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why this specialist should take over' } },
      additionalProperties: true,
    },
  }));
}

/**
 * The hand-off the model chose, or undefined when it answered itself: a call of a transfer tool wins;
 * otherwise the first JSON object in the text whose `handoff` (or `transfer_to`) names a target by
 * role or agent name (letter case and surrounding spaces aside).
 */
export function handoffChoice(
  resp: Pick<ModelResponse, 'text' | 'toolCalls'>,
  targets: readonly HandoffTarget[],
): HandoffChoice | undefined {
  if (targets.length === 0) return undefined;
  for (const call of resp.toolCalls) {
    const target = targets.find((t) => t.tool === call.tool || t.tool === providerToolName(call.tool));
    if (!target) continue;
    const args = isRecord(call.args) ? call.args : {};
    const message = resp.text.trim();
    return { ...args, handoff: target.role, ...(message ? { message } : {}) };
  }
  for (const candidate of jsonObjectsIn(resp.text)) {
    const named = candidate.handoff ?? candidate.transfer_to;
    if (typeof named !== 'string') continue;
    const wanted = named.trim().toLowerCase();
    const target = targets.find((t) => t.role.trim().toLowerCase() === wanted || t.agent.toLowerCase() === wanted);
    if (target) {
      const { transfer_to: _, ...rest } = candidate;
      return { ...rest, handoff: target.role };
    }
  }
  return undefined;
}

/** JSON objects in `text`, in order: the whole text, fenced code blocks, then each balanced `{…}` that parses. */
function jsonObjectsIn(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const tryParse = (s: string) => {
    try {
      const v: unknown = JSON.parse(s);
      if (isRecord(v)) out.push(v);
    } catch {
      // Not JSON: prose around the answer, or a brace in the text.
    }
  };
  tryParse(text.trim());
  for (const m of text.matchAll(/```[A-Za-z0-9_-]*[ \t]*\r?\n([^]*?)```/g)) tryParse(m[1]!.trim());
  // Balanced braces outside strings, so prose such as "Sure: {"handoff": "returns"}" is found.
  for (let start = text.indexOf('{'); start >= 0 && out.length < 20; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i]!;
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        tryParse(text.slice(start, i + 1));
        break;
      }
    }
  }
  return out;
}
