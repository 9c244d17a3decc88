import { stableJson } from '../runtime/executeStep.js';
import type { Redactor } from '../secrets/Redactor.js';

/**
 * Whether a start that an idempotency key answered with an earlier run asked with another input.
 * The run comes back as it ran (same key → same run); this lets the caller say so. Compared as
 * stored: the new input redacted as the run record's was, key order ignored.
 */
export function inputDiffers(redactor: Redactor, input: unknown, storedInput: unknown): boolean {
  return stableJson(redactor.redact(input ?? {})) !== stableJson(storedInput ?? {});
}
