import { isMap, isScalar, isSeq, type Node, type Pair, type Scalar } from 'yaml';

/** A mapping key that names no field or handle, with what to write instead. */
export interface UnsupportedYamlKey {
  readonly offset: number;
  readonly length: number;
  readonly message: string;
}

/**
 * Why the key of `pair` cannot be read as a workflow field, or undefined when it can: a list, a
 * mapping or an alias as a key (which the yaml package would stringify, with a process warning),
 * or YAML 1.1's merge key `<<`, which it reads as a field named '<<' unless told to merge.
 */
export function unsupportedYamlKey(pair: Pair<Node | null, unknown>): UnsupportedYamlKey | undefined {
  const k = pair.key;
  if (k === null) return undefined;
  const [start, end] = k.range ?? [0, 1];
  const at = { offset: start, length: Math.max(1, end - start) };
  if (!isScalar(k)) {
    const what = isSeq(k) ? 'a list' : isMap(k) ? 'a mapping' : 'an alias';
    return {
      ...at,
      message: `mapping keys must be plain strings (field names and task handles), but this key is ${what}; write it as plain text (quoted if it starts with '[', '{', '?', '*' or '&')`,
    };
  }
  if (k.value === '<<' && (k as Scalar).type === 'PLAIN') {
    return {
      ...at,
      message:
        "YAML merge keys ('<<') are not supported: the anchor's fields are not merged in here; write the fields out (an alias of a whole value, such as `a: *base`, does work)",
    };
  }
  return undefined;
}

/** Every unsupported key in `node`, at any depth, in document order. */
export function unsupportedYamlKeys(node: unknown, out: UnsupportedYamlKey[] = []): UnsupportedYamlKey[] {
  if (isMap(node)) {
    for (const pair of node.items as Pair<Node | null, unknown>[]) {
      const bad = unsupportedYamlKey(pair);
      if (bad) out.push(bad);
      unsupportedYamlKeys(pair.value, out);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) unsupportedYamlKeys(item, out);
  }
  return out;
}
