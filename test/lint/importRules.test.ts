// The import rules of eslint.config.js, run through ESLint itself on snippets placed at probe paths: a
// flat config's later block replaces an earlier one's options for the same rule, so these check that a
// file in a subfolder still gets its ancestors' bans (the compiler-wide fs ban in source/, the engine's
// and the runtime's package bans in their subfolders) besides its own.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

interface Row {
  readonly scopes: readonly string[];
  readonly why: string;
  readonly paths?: readonly string[];
  readonly patterns?: readonly string[];
}
// The config is plain JavaScript (ESLint loads it as is): its rows are read as data.
const configFile: string = '../../eslint.config.js';
const rows = ((await import(configFile)) as { BANS: readonly Row[] }).BANS;

/** The import-rule findings for `code` written at `filePath` (relative to the repository root). */
async function importFindings(filePath: string, code: string): Promise<{ ruleId: string | null; message: string; line: number }[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${filePath}` });
  return result!.messages
    .filter((m) => m.ruleId === 'no-restricted-imports')
    .map((m) => ({ ruleId: m.ruleId, message: m.message, line: m.line }));
}

/** The row a message cites, by its reason. */
function why(scope: string): string {
  return rows.find((r) => r.scopes.includes(scope))!.why;
}

describe('ESLint import rules', () => {
  it('refuses node:fs in the compiler source/ folder, with the compiler-wide reason', async () => {
    const found = await importFindings(
      'packages/compiler/src/source/probe.ts',
      "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
    );
    expect(found).toEqual([
      {
        ruleId: 'no-restricted-imports',
        message: `'node:fs' import is restricted from being used. ${why('packages/compiler/src')}`,
        line: 1,
      },
    ]);
  });

  it('gives a source/ file its own bans too, and lets it import the contract', async () => {
    const found = await importFindings(
      'packages/compiler/src/source/probe.ts',
      [
        "import { didYouMean } from '@stepforge/contract';",
        "import { parseChain } from '../chain/parseChain.js';",
        "import { S3Client } from '@aws-sdk/client-s3';",
        'export { didYouMean, parseChain, S3Client };',
      ].join('\n'),
    );
    expect(found.map((f) => [f.line, f.message.endsWith(why('packages/compiler/src/source'))])).toEqual([
      [2, true],
      [3, false],
    ]);
    expect(found[1]!.message).toContain(why('packages/compiler/src'));
  });

  it('keeps checks/ (and checks/quotas/) off the front-ends and the lowering, but lets them read the IR', async () => {
    const checks = await importFindings(
      'packages/compiler/src/checks/probe.ts',
      "import { a } from '../lower/LowerContext.js';\nimport { b } from '../dsl/DslDocument.js';\nimport type { IrStep } from '../ir/Ir.js';\nexport type { IrStep };\nexport { a, b };\n",
    );
    expect(found(checks)).toEqual([1, 2]);
    const quotas = await importFindings(
      'packages/compiler/src/checks/quotas/probe.ts',
      "import { a } from '../../lower/jsonLength.js';\nimport { readFile } from 'node:fs/promises';\nexport { a, readFile };\n",
    );
    expect(found(quotas)).toEqual([1, 2]);
    expect(quotas[0]!.message).toContain(why('packages/compiler/src/checks'));
    expect(quotas[1]!.message).toContain(why('packages/compiler/src'));
  });

  it('gives the engine state types the engine-wide ban on Stepforge packages besides their own', async () => {
    const found = await importFindings(
      'packages/engine/src/interpreter/states/probe.ts',
      "import { x } from '@stepforge/contract';\nimport { y } from './pass.js';\nexport { x, y };\n",
    );
    expect(found.map((f) => f.message)).toEqual([
      `'@stepforge/contract' import is restricted from being used by a pattern. ${why('packages/engine/src')}`,
      `'./pass.js' import is restricted from being used by a pattern. ${why('packages/engine/src/interpreter/states')}`,
    ]);
  });

  // Every scope, wherever its folder is: a probe file in it is refused each enclosing folder's exact
  // module names (patterns are mostly relative imports, whose meaning depends on the folder).
  for (const scope of new Set(rows.flatMap((r) => r.scopes))) {
    const enclosing = rows.filter((r) => r.scopes.some((o) => scope.startsWith(`${o}/`)));
    const banned = enclosing.flatMap((r) => (r.paths ?? []).map((p) => [p, r.why] as const));
    if (banned.length === 0) continue;
    it(`refuses in ${scope}/ every module name its enclosing folders refuse`, async () => {
      const code =
        banned.map(([p], i) => `import * as m${i} from '${p}';`).join('\n') + `\nexport { ${banned.map((_, i) => `m${i}`).join(', ')} };\n`;
      const messages = (await importFindings(`${scope}/probe.ts`, code)).map((f) => f.message);
      expect(messages).toEqual(banned.map(([p, reason]) => `'${p}' import is restricted from being used. ${reason}`));
    });
  }
});

function found(findings: readonly { line: number }[]): number[] {
  return findings.map((f) => f.line);
}
