// Python's json.dumps text (", " and ": " separators, ASCII escapes): AWS Lambda's Python runtime
// serialises results and error payloads this way, and Content-Length headers count these bytes.

/** Serialises a value the way Python's `json.dumps` does by default. */
export function pythonJsonDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
  if (typeof v === 'string') return pyString(v);
  if (Array.isArray(v)) return `[${v.map(pythonJsonDumps).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyString(k)}: ${pythonJsonDumps(x)}`)
    .join(', ')}}`;
}

function pyString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
