import { hash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal data always serialises the same way. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  // One string built in place: it runs for every step of a document (entries, filter and map
  // allocated three arrays per object). The default sort orders keys by UTF-16 code units, as `<` does.
  const o = value as Record<string, unknown>;
  let out = '{';
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  for (const k of keys) {
    const v = o[k];
    if (v === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/**
 * A step's stable identity: sha256 (hex) of the canonical JSON of its kind, configuration and tool
 * set. Formatting, key order and where the handle appears do not change it; any change to the
 * task's fields or its tool grants does.
 */
export function stepIdentity(kind: string, config: unknown, tools: readonly string[], known?: Map<string, string>): string {
  // canonicalJson({ kind, config, tools }) with its keys in their sorted order written out: the
  // object and its key sort cost more than the rest. The one-shot `hash` (Node ≥ 20.12) costs
  // about half of a createHash object.
  const canonical =
    config === undefined
      ? canonicalJson({ kind, tools })
      : `{"config":${canonicalJson(config)},"kind":${JSON.stringify(kind)},"tools":${canonicalJson(tools)}}`;
  // `known`: the identities one document's conversion has already hashed (its steps of one kind
  // and configuration share one, and the hash cost more than the canonical text).
  let identity = known?.get(canonical);
  if (identity === undefined) {
    identity = hash('sha256', canonical, 'hex');
    known?.set(canonical, identity);
  }
  return identity;
}
