// Random edits of YAML documents for the fuzz and fast-path tests: deletions, YAML and expression
// snippets, duplicated or dropped lines, stray characters, changed indentation. Deterministic per seed.
import type { Rand } from './exprCorpus.js';

/** What the mutations insert: YAML syntax, expression pieces, odd characters. */
export const DOCUMENT_SNIPPETS: readonly string[] = [
  '${',
  '}',
  '${ steps.',
  '.output',
  ' | default ',
  '&&',
  '||',
  '==',
  ':',
  '- ',
  '  ',
  '\n',
  '"',
  "'",
  '[',
  ']',
  '{',
  '}',
  '*a',
  '&a ',
  '!!str ',
  '? ',
  '|',
  '>',
  '#',
  '\t',
  'call: for_each\n',
  'call: agnet\n',
  'do:\n  z:\n',
  '- name: x\n  kind: agent\n',
  'after: [',
  'steps.a.output',
  '$secret:',
  'res://',
  '\u0000',
  '\uFEFF',
  'null',
  '~',
  '1e999',
  '-',
  'input.',
  '${ input.x ',
];

/** 1–4 random edits of `text`, inserting from `snippets`. */
export function mutateDocument(r: Rand, text: string, snippets: readonly string[] = DOCUMENT_SNIPPETS): string {
  let t = text;
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (t.length + 1));
    const p = r();
    if (p < 0.3) t = t.slice(0, at) + t.slice(at + 1 + Math.floor(r() * 6));
    else if (p < 0.65) t = t.slice(0, at) + snippets[Math.floor(r() * snippets.length)]! + t.slice(at);
    else if (p < 0.8) {
      // Duplicate or drop a whole line: duplicate keys, broken indentation, duplicate steps.
      const lines = t.split('\n');
      const k = Math.floor(r() * lines.length);
      if (r() < 0.5) lines.splice(k, 0, lines[k]!);
      else lines.splice(k, 1);
      t = lines.join('\n');
    } else if (p < 0.9) t = t.slice(0, at) + String.fromCharCode(32 + Math.floor(r() * 95)) + t.slice(at);
    else t = t.replace(/  /, r() < 0.5 ? ' ' : '   ');
  }
  return t;
}
