// Each Lambda kind's `${…}` placeholder as one string per process: kindPlaceholder builds a new
// string per call, and every Task of a large workflow (and every step of its manifest) held its
// own copy of one of a handful of texts.
import { kindPlaceholder, type LambdaStepKind } from '@stepforge/contract';

const KIND_PLACEHOLDERS = new Map<LambdaStepKind, string>();

/** kindPlaceholder(kind), the same string each time. */
export function kindResource(kind: LambdaStepKind): string {
  let text = KIND_PLACEHOLDERS.get(kind);
  if (text === undefined) KIND_PLACEHOLDERS.set(kind, (text = kindPlaceholder(kind)));
  return text;
}
