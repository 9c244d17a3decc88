import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal data always serialises the same way. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * A step's stable identity: sha256 (hex) of the canonical JSON of its kind, configuration and tool
 * set. Formatting, key order and where the handle appears do not change it; any change to the
 * task's fields or its tool grants does.
 */
export function stepIdentity(kind: string, config: unknown, tools: readonly string[]): string {
  return createHash('sha256').update(canonicalJson({ kind, config, tools })).digest('hex');
}
