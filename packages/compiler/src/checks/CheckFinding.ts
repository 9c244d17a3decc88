// What a check reports: its diagnostic class, the message and the fix. The caller owns the location
// (each front-end and the lowering locate findings their own way) and turns it into a StepforgeError.

/** One rule broken: the class (`code`), what is wrong, and how to fix it when the message does not say. */
export interface CheckFinding {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}
