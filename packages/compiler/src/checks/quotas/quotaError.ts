import { StepforgeError } from '@stepforge/contract';
import type { IrDocument, IrStep } from '../../ir/Ir.js';

/** A quota finding about `step` (or the whole document), located at the step or at the file's start. */
export function quotaError(doc: IrDocument, code: string, step: IrStep | undefined, message: string, hint: string): StepforgeError {
  return new StepforgeError(code, message, {
    location: step?.location ?? { file: doc.file, line: 1, column: 1 },
    source: doc.source,
    hint,
    details: step ? { step: step.id } : undefined,
  });
}
