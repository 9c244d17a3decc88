// Whether an error means the embedded stack's owner went away: its endpoints refuse or cut connections.
/** Transport errors that mean the stack's endpoints stopped answering (their process ended). */
const LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** True when `e` (or what caused it) is a connection to the stack refused or cut. */
export function isLostConnection(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c !== null && typeof c === 'object' && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    if (LOST.has(String((c as { code?: unknown }).code))) return true;
  }
  return false;
}
