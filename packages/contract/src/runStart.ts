// The limits a run's start is checked against before anything is stored: the execution input's
// size, and the idempotency key's length.

/** Step Functions' limit on an execution's input (StartExecution `input`), in UTF-8 bytes. */
export const MAX_EXECUTION_INPUT_BYTES = 256 * 1024;

/**
 * Why a run's execution input (its JSON text, the workflow input with the run's metadata) is too
 * large for Step Functions, or undefined when it fits. Checked before a run is recorded, so an
 * input that could never start leaves no run behind (StartExecution would refuse it only after
 * the run record was written, and a record over DynamoDB's 400 KB item limit fails as an internal
 * error).
 */
export function executionInputSizeError(text: string): string | undefined {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most inputs are settled without counting.
  if (text.length * 3 <= MAX_EXECUTION_INPUT_BYTES) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_EXECUTION_INPUT_BYTES) return undefined;
  return `the run's input is ${formatBytes(bytes)} as Step Functions execution input; Step Functions takes at most ${MAX_EXECUTION_INPUT_BYTES / 1024} KiB (${MAX_EXECUTION_INPUT_BYTES} bytes)`;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB (${n} bytes)` : `${(n / 1024).toFixed(1)} KiB (${n} bytes)`;
}

/** The longest idempotency key a run takes (its key item must stay well inside DynamoDB's 2048-byte partition key). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

/** Why an idempotency key cannot name a run, or undefined when it can: 1 to 256 characters. */
export function idempotencyKeyError(key: string): string | undefined {
  if (key.length === 0) return 'an idempotency key cannot be empty';
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    return `an idempotency key is at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}`;
  return undefined;
}

/**
 * The deepest nesting a run's input may have: DynamoDB stores a nested attribute at most 32
 * levels deep, and the run record keeps the input as one. Deeper input could be recorded on
 * neither stack, and on the way would overflow the recursive code that walks values.
 */
export const MAX_INPUT_DEPTH = 32;

/**
 * Why a value is nested too deep for a run's input, or undefined when it is not: an object or
 * array is one level, each value inside it one more. Walked without recursion, so any depth is
 * measured without overflowing the stack; it stops at the first level over the limit.
 */
export function inputDepthError(value: unknown, max = MAX_INPUT_DEPTH): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max)
      return `the input is nested more than ${max} levels deep (objects and arrays inside one another); a run's input may nest at most ${max} levels`;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return undefined;
}
