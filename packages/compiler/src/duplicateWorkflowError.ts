import { StepforgeError, type SourceLocation } from '@stepforge/contract';

/** One of two workflows of a project that get the same workflow name. */
export interface NamedWorkflow {
  /** The workflow name (the state machine's). */
  readonly name: string;
  readonly displayName: string;
  readonly file: string;
  /** Where the name is written (`document.name`), when the document writes one. */
  readonly nameLocation?: SourceLocation;
  /** The document's text, for the error's excerpt. */
  readonly source?: string;
}

/**
 * StepforgeError `duplicate_workflow`: two workflows of one project would be one state machine.
 * Display names are free text and the workflow name is derived from them, so two different display
 * names ("Triage — EU", "Triage EU") may meet in one workflow name; the message shows both.
 * Located at the second one's name.
 */
export function duplicateWorkflowError(first: NamedWorkflow, second: NamedWorkflow): StepforgeError {
  const shown = (w: NamedWorkflow) => (w.displayName === w.name ? `'${w.name}'` : `'${w.displayName}' (workflow name '${w.name}')`);
  const same = first.displayName === second.displayName;
  return new StepforgeError(
    'duplicate_workflow',
    same
      ? `${second.file} and ${first.file} both name their workflow ${shown(second)}: state machine names must be unique in a project`
      : `${second.file} names its workflow ${shown(second)}, which gives the same workflow name as ${shown(first)} of ${first.file}: state machine names must be unique in a project`,
    {
      location: second.nameLocation ?? { file: second.file, line: 1, column: 1 },
      ...(second.source !== undefined ? { source: second.source } : {}),
      hint: `give one of them another name (document.name), one that differs in letters or digits, not only in spaces, punctuation or accents`,
      details: { workflow: second.name, files: [first.file, second.file] },
    },
  );
}
