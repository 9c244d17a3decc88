// The envelope's plain constants: its version, the inline-output limits and the run-metadata key.
// They live apart from envelope.ts, which builds its zod schemas when it loads, so that a bundle
// needing only these numbers (the compiler lowers with them; `stepforge validate` never parses an
// envelope) leaves those schemas out and does not pay for building them at start-up.

/**
 * Step outputs whose JSON is larger travel by reference (`{"$ref"}`, DESIGN §2). The compiler's payload
 * budgets (checkQuotas) assume every other output is at most this big, so the runtime may lower it, never raise it.
 */
export const INLINE_OUTPUT_MAX_BYTES = 4 * 1024;
/**
 * The most an output the state machine reads itself may be (`readByStateMachine`): JSONata in a guard,
 * condition, `for_each` items, a pure step or hand-off routing cannot follow a reference, so such an
 * output stays inline up to this size and fails the step with OutputTooLarge above it.
 */
export const STATE_READ_OUTPUT_MAX_BYTES = 32 * 1024;
/**
 * The inline limit of a step inside a `for_each` iteration (`inlineOutputMaxBytes`): the Map's result
 * holds one value per iteration (up to max_iterations, 50 by default), so each must be small for the
 * whole array, and the state that reads it, to stay within the 256 KiB payload quota. A reference is
 * under this size plus 200 bytes whatever the table's name (at most 255 characters).
 */
export const ITERATION_INLINE_OUTPUT_MAX_BYTES = 512;

/** The envelope version the compiler emits; handlers accept 1 and 2 (see EnvelopeInputs). */
export const ENVELOPE_VERSION = 2;

/** Optional run metadata a starter may put in the execution input under this key (stripped from `input`). */
export const RUN_META_KEY = '$stepforge';
