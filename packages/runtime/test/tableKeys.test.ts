// The single table's layout has one owner: packages/runtime/src/persistence/. No other source file of the
// repository builds one of its keys (a string or template literal holding a key prefix); comments
// may name them. Read with TypeScript's parser, so a prefix in a comment is not a key.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..', '..');
const OWNER = join('packages', 'runtime', 'src', 'persistence') + sep;
const ROOTS = ['packages', 'infra/lib', 'infra/bin'];
/** Every key prefix of the runs table (persistence/Tables.ts). */
const PREFIXES = [
  'RUN#',
  'STEP#',
  'IDEM#',
  'APPROVAL#',
  'WORKFLOW#',
  'VERSION#',
  'RUNKEY#',
  'EVENT#',
  'CONV#',
  'MSG#',
  'BLOB#',
  'CHUNK#',
  'RUNSTATUS#',
  'WF#',
];
const KEY = new RegExp(`(^|[^A-Za-z_])(${PREFIXES.map((p) => p.replace('#', '\\#')).join('|')})`);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'test' || name === 'cdk.out') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name) && !/\.(test|d)\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** The string and template literal texts of a TypeScript source, with their lines (parsed: comments are not literals). */
function literalsOf(text: string): { text: string; line: number }[] {
  const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const add = (node: ts.Node, t: string) => out.push({ text: t, line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1 });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node, node.text);
    else if (ts.isTemplateExpression(node)) add(node, [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('${}'));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

describe('the table keys have one owner (packages/runtime/src/persistence)', () => {
  it('finds a key prefix in a literal and not in a comment', () => {
    const found = literalsOf(
      "// RUN# in a comment\nconst a = `RUN#${id}`;\nconst b = 'STEP#';\nconst c = `x ${y} IDEM#${z}`;\nconst d = 'not a key';\n",
    ).filter((l) => KEY.test(l.text));
    expect(found.map((l) => l.line)).toEqual([2, 3, 4]);
  });

  it('no source file outside persistence/ builds a key', () => {
    const offenders: string[] = [];
    for (const root of ROOTS) {
      for (const file of sourceFiles(join(REPO, root))) {
        const rel = relative(REPO, file);
        if (rel.startsWith(OWNER)) continue;
        const text = readFileSync(file, 'utf8');
        // Only a file that holds a prefix somewhere is parsed.
        if (!KEY.test(text)) continue;
        for (const l of literalsOf(text)) if (KEY.test(l.text)) offenders.push(`${rel}:${l.line}: ${JSON.stringify(l.text)}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
