import { z } from 'zod';

/**
 * One `triggers:` entry: an EventBridge rule that starts the workflow. The CDK app (infra/) deploys
 * these; the schema mirrors what it accepts (docs/deploy.md), so a document that validates also synthesises.
 */
export const ChainTriggerSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { message: "1–40 letters, digits, '-' or '_'" }).optional(),
    event_pattern: z
      .record(z.string(), z.unknown())
      .refine((p) => Object.keys(p).length > 0, { message: 'expected a non-empty mapping (an EventBridge event pattern)' }),
    event_bus: z.string().min(1, { message: 'an event bus name' }).optional(),
  })
  .describe('a trigger');

/** The `triggers:` list. */
export const ChainTriggersSchema = z.array(ChainTriggerSchema);

export type ChainTrigger = z.infer<typeof ChainTriggerSchema>;
