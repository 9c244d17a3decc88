// Two documents of one project whose display names give one workflow name would share one state
// machine (and one compiled file name). `run` and `compile -o DIR` meet the other one as what they
// registered or wrote before; the rule keeps re-running or editing one file from ever being refused.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { compileDocument, type NamedWorkflow } from '@stepforge/compiler';
import { CODE_MODULE } from './compileCodeModule.js';

/**
 * The other workflow that `current` would replace, when it is a clash: what was registered (or
 * compiled) under the same workflow name came from another file with another display name, and that
 * file still exists and still gives that workflow name. Otherwise undefined: the same file (re-run,
 * or edited, its display name too), the same display name (a copy or a move of one workflow), or a
 * file since deleted or renamed inside (the record is stale and is replaced).
 */
export function workflowNameClash(
  baseDir: string,
  previous: { readonly file?: string; readonly displayName?: string },
  current: NamedWorkflow,
): NamedWorkflow | undefined {
  const file = previous.file;
  if (file === undefined || previous.displayName === undefined || /^<.*>$/.test(file) || /^<.*>$/.test(current.file)) return undefined;
  if (previous.displayName === current.displayName) return undefined;
  if (resolve(baseDir, file) === resolve(baseDir, current.file)) return undefined;
  // A module's workflow is compiled by importing it: not done for a check; only documents are.
  if (CODE_MODULE.test(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(resolve(baseDir, file), 'utf8');
  } catch {
    return undefined;
  }
  let now: ReturnType<typeof compileDocument>;
  try {
    now = compileDocument(text, { file });
  } catch {
    // It no longer compiles: it is no workflow of the project now.
    return undefined;
  }
  if (now.name !== current.name) return undefined;
  return {
    name: now.name,
    displayName: now.displayName,
    file,
    source: text,
    ...(now.ir.nameLocation !== undefined ? { nameLocation: now.ir.nameLocation } : {}),
  };
}
