// Step Functions' limit on a state machine definition's size.
import type { IrDocument } from '../../ir/Ir.js';
import { quotaError } from './quotaError.js';

/** Largest definition Step Functions accepts (bytes, UTF-8). */
export const MAX_DEFINITION_BYTES = 1024 * 1024;

/** Throws a `definition_too_large` error when the serialised definition exceeds the quota. */
export function checkDefinitionSize(doc: IrDocument, definitionBytes: number): void {
  if (definitionBytes <= MAX_DEFINITION_BYTES) return;
  throw quotaError(
    doc,
    'definition_too_large',
    undefined,
    `the compiled definition is ${definitionBytes} bytes; Step Functions accepts at most ${MAX_DEFINITION_BYTES}`,
    'split the workflow into smaller workflows, or shorten long prompts/configuration (move them into agent declarations)',
  );
}
