/**
 * An error cause as a person wants to read it. Step Functions reports a Lambda failure's cause as
 * the function's error JSON (Node.js: `{"errorType", "errorMessage", "trace"}`; Python:
 * `{"errorMessage", "errorType", "requestId", "stackTrace"}`), which our
 * Fail states prefix with `step '<id>' failed: `; the display shows the prefix and the message and
 * leaves the JSON (kept as is in the history) for `--json`. Anything else is returned unchanged.
 */
export function readableCause(cause: string): string {
  const m = /^(step '[^']*' failed: )?(\{[\s\S]*\})$/.exec(cause);
  if (!m) return cause;
  try {
    const parsed = JSON.parse(m[2]!) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? `${m[1] ?? ''}${parsed.errorMessage}` : cause;
  } catch {
    return cause;
  }
}
