import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { UnsupportedYamlKey } from './unsupportedYamlKey.js';

/** The tags of plain data: what JSON can hold. Any other tag makes a value the workflow cannot carry. */
const PLAIN_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));
const CORE_PREFIX = 'tag:yaml.org,2002:';

/** How far aliases may expand when a document is converted to data (the yaml package's maxAliasCount). */
export const MAX_ALIAS_COUNT = 1000;

/** What yamlValueIssues found, and where the first alias is (to blame when expanding aliases fails). */
export interface YamlValueIssues {
  readonly issues: UnsupportedYamlKey[];
  /** Offset and length of the first alias in the document, if it has one. */
  readonly firstAlias?: { readonly offset: number; readonly length: number };
}

/**
 * Anchors, aliases and tags a workflow document cannot use, each at its place: an alias with no anchor
 * before it (the yaml package would throw while converting), an alias inside the value its own anchor
 * marks (the value would contain itself), a tag outside plain data (`!!binary`, `!!timestamp`, `!!set`,
 * a local `!thing`), and a value that does not fit its tag (`!!int abc`). Walks the document in source
 * order, so an alias resolves to the last anchor of its name before it, as YAML says.
 */
export function yamlValueIssues(doc: Document, text: string): YamlValueIssues {
  const issues: UnsupportedYamlKey[] = [];
  const anchors = new Map<string, Node>();
  /** Anchors whose node is being walked: an alias of one of them is inside its own value. */
  const open = new Map<string, number>();
  let firstAlias: { offset: number; length: number } | undefined;

  const at = (node: Node): { offset: number; length: number } => {
    const [start, end] = node.range ?? [0, 1];
    return { offset: start, length: Math.max(1, end - start) };
  };

  const visit = (node: unknown): void => {
    if (isAlias(node)) {
      const where = at(node);
      firstAlias ??= where;
      // The nearest anchor before the alias is an open one when the alias is inside its value.
      if (open.has(node.source)) {
        issues.push({
          ...where,
          message: `alias '*${node.source}' is inside the value its anchor '&${node.source}' marks, so that value would contain itself; write the inner value out`,
        });
      } else if (!anchors.has(node.source)) {
        issues.push({
          ...where,
          message: `alias '*${node.source}' has no anchor: no value before it is marked '&${node.source}'; mark the value to repeat with &${node.source} earlier in the file, or write the value out here`,
        });
      }
      return;
    }
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return;
    const tag = node.tag;
    if (tag !== undefined && !PLAIN_TAGS.has(tag)) {
      const shown = tag.startsWith(CORE_PREFIX) ? `!!${tag.slice(CORE_PREFIX.length)}` : tag;
      issues.push({
        ...tagAt(text, at(node).offset),
        message: `YAML tag '${shown}' is not supported: a workflow document holds plain data (strings, numbers, true/false, null, lists and mappings); remove the tag`,
      });
    }
    const anchor = node.anchor;
    if (anchor !== undefined) open.set(anchor, (open.get(anchor) ?? 0) + 1);
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        // An alias as a key is reported as an unsupported key (unsupportedYamlKey).
        if (!isAlias(pair.key)) visit(pair.key);
        visit(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item);
    }
    // The anchor names this node for the aliases after it (a later anchor of the same name replaces it).
    if (anchor !== undefined) {
      const depth = open.get(anchor)! - 1;
      if (depth === 0) open.delete(anchor);
      else open.set(anchor, depth);
      anchors.set(anchor, node);
    }
  };
  visit(doc.contents);

  // A plain tag on a value that is not of its type (`!!int abc`): the yaml package keeps the text and warns.
  for (const w of doc.warnings) {
    if (w.code !== 'TAG_RESOLVE_FAILED') continue;
    const tag = /tag:yaml\.org,2002:(\w+)/.exec(w.message)?.[1];
    if (tag === undefined || !PLAIN_TAGS.has(CORE_PREFIX + tag)) continue;
    const [start, end] = w.pos;
    issues.push({
      offset: start,
      length: Math.max(1, end - start),
      message: `the value does not fit its YAML tag '!!${tag}'; remove the tag, or write a value of that type`,
    });
  }
  issues.sort((a, b) => a.offset - b.offset);
  return { issues, firstAlias };
}

/**
 * The tag before the value at `valueStart` (a node's range starts at its value): the last `!` before
 * it opens the tag's final part, and the tag runs back to the whitespace or flow indicator before it.
 */
function tagAt(text: string, valueStart: number): { offset: number; length: number } {
  const bang = text.lastIndexOf('!', valueStart);
  if (bang < 0) return { offset: valueStart, length: 1 };
  let start = bang;
  while (start > 0 && !/[\s,[\]{}]/.test(text[start - 1]!)) start--;
  let end = bang;
  while (end < text.length && !/[\s,[\]{}]/.test(text[end]!)) end++;
  return { offset: start, length: Math.max(1, end - start) };
}

/** Why converting the document to data failed (aliases that expand too far), as a workflow author reads it. */
export function aliasExpansionMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  if (/alias count/i.test(message)) {
    return 'the aliases in this document expand to too many values (aliases of values that hold aliases multiply); write the repeated values out, or alias them fewer times';
  }
  return `the document's anchors and aliases cannot be resolved: ${message.split('\n')[0]}`;
}
