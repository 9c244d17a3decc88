// The JSON fast path's locator answers exactly what the `yaml` Document's locator answers, for every
// value, key and position inside a string, so errors and comments point at the same line:column.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { SourceText } from '@stepforge/contract';
import { parseJsonFast } from '../../src/source/parseJsonFast.js';
import { YamlDocumentLocator } from '../../src/source/YamlDocumentLocator.js';
import { PRECISE_PARSE_OPTIONS } from '../../src/source/yamlNodes.js';
import { loadDocument } from '../../src/index.js';
import { thousandTaskContenox } from '../../../../bench/compile.bench.js';

const PEERS = join(__dirname, '../../../../../shared/peers/contenox/chains');

/** Every data path of `v`, with the string values. */
function paths(v: unknown, at: PropertyKey[] = [], out: { path: PropertyKey[]; value: unknown }[] = []) {
  out.push({ path: at, value: v });
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function compare(text: string, file: string): number {
  const src = new SourceText(text, file);
  const fast = parseJsonFast(text, src)!;
  const precise = new YamlDocumentLocator(parseDocument(text, PRECISE_PARSE_OPTIONS).contents ?? undefined, src);
  let n = 0;
  for (const { path, value } of paths(fast.data)) {
    expect(fast.locator.at(path), `${file} ${path.join('.')}`).toEqual(precise.at(path));
    expect(fast.locator.at([...path, 'missing'])).toEqual(precise.at([...path, 'missing']));
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const k of [...Object.keys(value), 'missing']) expect(fast.locator.keyAt(path, k)).toEqual(precise.keyAt(path, k));
    }
    if (typeof value === 'string') {
      for (const [s, e] of [
        [0, 1],
        [Math.floor(value.length / 2), value.length],
        [value.length, value.length],
      ] as const) {
        expect(fast.locator.inString(path, value, s, e), `${file} ${path.join('.')} [${s},${e})`).toEqual(
          precise.inString(path, value, s, e),
        );
      }
    }
    n++;
  }
  return n;
}

describe('Function: parseJsonFast', () => {
  it('locates every value, key and string position as the yaml Document does', () => {
    const text =
      `{\n  "id": "esc",\n  "tasks": [\n    {"id": "a", "handler": "noop", "prompt_template": "tab\\there \\"q\\" \\u00e9\\ud83d\\ude00 {{var:x|d}} / \\/ end",\n` +
      `      "n": -1.5e3, "t": true, "z": null, "e": {}, "l": [], "nested": [[1, [2]], {"k": {"k2": "v"}}]},\n    { "id" :"b","handler":"route" , "transition":{"branches":[{"operator":"default","goto":"end"}]}}\n  ]\n}\n`;
    expect(compare(text, 'esc.json')).toBe(28);
    // The benchmark's chain, pretty-printed as JSON.stringify writes it.
    expect(compare(thousandTaskContenox(60), 'bench.json')).toBeGreaterThan(600);
  });

  it.skipIf(!existsSync(PEERS))("locates Contenox's own chains as the yaml Document does", () => {
    for (const f of readdirSync(PEERS).filter((x) => x.endsWith('.json'))) compare(readFileSync(join(PEERS, f), 'utf8'), f);
  });

  it('declines what is not a JSON object, and a duplicate key (the precise parse reports it, located)', () => {
    expect(parseJsonFast('tasks: []', new SourceText('tasks: []'))).toBeUndefined();
    expect(parseJsonFast('{"tasks": [}', new SourceText('{"tasks": [}'))).toBeUndefined();
    const dup = '{"id": "d", "tasks": [{"id": "a", "handler": "noop", "id": "b"}]}';
    const loaded = loadDocument(dup, { file: 'dup.json' });
    expect(loaded.errors.map((e) => [e.code, e.location?.line, e.location?.column])).toEqual([['invalid_document', 1, 54]]);
  });
});
