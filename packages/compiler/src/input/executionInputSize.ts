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
