/** Why an ASL definition cannot run as an Express workflow, or undefined when it can. */
export function expressBlocker(asl: unknown): string | undefined {
  const text = JSON.stringify(asl);
  // Express workflows support neither the callback (.waitForTaskToken) nor the run-a-job (.sync) patterns.
  if (text.includes('.waitForTaskToken')) return 'its tool calls wait for a task token (so that policy can gate them for a human), which Express workflows do not support';
  if (/\.sync(:2)?"/.test(text)) return 'it uses a .sync integration, which Express workflows do not support';
  return undefined;
}
