// The one set of rules for a workflow's `triggers:` (EventBridge rules that start it). The DSL and
// chain schemas check them at validate and compile time; the CDK app applies the same predicates when
// it deploys them, so a document that validates also synthesises, and one that does not is refused
// by both for the same reason.
import { z } from 'zod';
import type { ManifestTrigger, SourceLocation } from '@stepforge/contract';

/** The fields a trigger may have. */
export const TRIGGER_FIELDS = ['name', 'description', 'event_pattern', 'event_bus'] as const;

/** A trigger's name: it becomes part of the EventBridge rule's construct id. */
export const TRIGGER_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** EventBridge's limit on a rule's description. */
export const TRIGGER_DESCRIPTION_MAX = 512;

/** An EventBridge event pattern: a non-empty mapping (EventBridge refuses an empty one). */
export function isEventPattern(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
}

/** One `triggers:` entry. */
export const TriggerSchema = z
  .strictObject({
    name: z
      .string()
      .regex(TRIGGER_NAME, { error: "1–40 letters, digits, '-' or '_' (a trigger name becomes part of the EventBridge rule's id)" })
      .optional()
      .describe('Rule id suffix (default trigger<N>).'),
    description: z
      .string()
      .max(TRIGGER_DESCRIPTION_MAX, {
        error: `at most ${TRIGGER_DESCRIPTION_MAX} characters (EventBridge's limit on a rule's description)`,
      })
      .optional()
      .describe("The EventBridge rule's description."),
    event_pattern: z
      .record(z.string(), z.unknown())
      .refine(isEventPattern, { message: 'expected a non-empty mapping (an EventBridge event pattern)' })
      .describe('EventBridge event pattern; matching events start a run.'),
    event_bus: z
      .string()
      .min(1, { error: 'an event bus name' })
      .optional()
      .describe("Event bus name (default: the account's default bus)."),
  })
  .describe('a trigger');

/** The `triggers:` list. */
export const TriggersSchema = z.array(TriggerSchema);

/**
 * A checked `triggers:` list as the manifest carries it: each entry's name defaulted to
 * `trigger<N>` by its position, and where it is written. Absent or not a list: none.
 */
export function manifestTriggers(value: unknown, locate: (index: number) => SourceLocation | undefined): ManifestTrigger[] {
  if (!Array.isArray(value)) return [];
  return value.map((raw, i) => {
    const t = raw as { name?: string; description?: string; event_pattern: Record<string, unknown>; event_bus?: string };
    const location = locate(i);
    return {
      name: t.name ?? `trigger${i + 1}`,
      eventPattern: t.event_pattern,
      ...(t.event_bus !== undefined ? { eventBus: t.event_bus } : {}),
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(location !== undefined ? { location } : {}),
    };
  });
}
