// The architecture's import rules (what never imports what), enforced on every source file, and no
// import cycles inside a package. `npm test` runs this before the tests. Style is not linted here:
// the rules are about structure, so that each concept keeps one home.
import tsParser from '@typescript-eslint/parser';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const ours = (...names) => names.map((n) => `@stepforge/${n}`);
const AWS_SDK = ['@aws-sdk/*', '@smithy/*', 'aws-sdk'];
const FS = ['node:fs', 'fs', 'node:fs/promises'];

/**
 * The import bans, one row per folder: `scopes` are folders (or files) relative to the repository root,
 * `paths` exact module names, `patterns` gitignore-style ones. In a flat config a later block's options
 * for a rule replace an earlier one's for the same file, so a block per row would let a subfolder's row
 * drop its ancestors' bans; `importRules` gives each scope the union of the bans of every row whose scope
 * contains it (its own included), and orders the blocks from the outermost folder in.
 */
export const BANS = [
  {
    scopes: ['packages/contract/src'], why: 'the contract is the vocabulary every package speaks: it depends on zod only',
    paths: ['yaml', 'js-yaml', 'jsonata', ...FS], patterns: ['@stepforge/*', ...AWS_SDK],
  },
  {
    scopes: ['packages/compiler/src'], why: 'compiling is pure: no other Stepforge package but the contract, no AWS SDK, no file system',
    paths: [...ours('engine', 'runtime', 'embedded', 'cli', 'infra'), ...FS], patterns: AWS_SDK,
  },
  {
    scopes: ['packages/compiler/src/source'], why: "the compiler's source/ sits below every front-end, the checks, the IR and the lowering",
    patterns: ['../chain/*', '../dsl/*', '../contenox/*', '../code/*', '../checks/*', '../ir/*', '../lower/*'],
  },
  frontEnd('chain'), frontEnd('dsl'), frontEnd('contenox'), frontEnd('code'),
  {
    scopes: ['packages/compiler/src/checks'], why: 'a check is a rule over data every front-end can give it: it never imports a front-end or the lowering',
    patterns: ['**/chain/*', '**/dsl/*', '**/contenox/*', '**/code/*', '**/lower/*'],
  },
  { scopes: ['packages/compiler/src/ir'], why: 'the IR sits below the lowering', patterns: ['../lower/*'] },
  {
    scopes: ['packages/compiler/src/lower/steps', 'packages/compiler/src/lower/optimize'],
    why: 'a step kind or a fold receives what it needs (a LowerContext, ASL); it never imports the orchestrator, another kind or a fold',
    patterns: ['./*', '../lowerWorkflow.js', '../steps/*', '../optimize/*'],
  },
  { scopes: ['packages/engine/src'], why: 'the engine runs any ASL and knows no Stepforge package', patterns: ['@stepforge/*'] },
  { scopes: ['packages/engine/src/interpreter'], why: 'the interpreter sits below the executions API and the server', patterns: ['**/executions/*', '**/server/*'] },
  {
    scopes: ['packages/engine/src/interpreter/states'], why: 'a state type receives an ExecutionContext: it never imports Execution.ts or another state type',
    patterns: ['**/Execution.js', './*'],
  },
  {
    scopes: ['packages/runtime/src'], why: 'Lambda bundles carry the handlers and the contract, not the compiler; AWS has no engine and no embedded stack',
    paths: ours('compiler', 'engine', 'embedded', 'cli', 'infra'), patterns: ['@stepforge/compiler/*', '@stepforge/engine/*', '@stepforge/embedded/*', '@stepforge/cli/*'],
  },
  { scopes: ['packages/runtime/src/steps'], why: 'a step knows its envelope, not how it was invoked', patterns: ['../handlers/*', '../runs/*', '../http/*', '../approvals/*'] },
  {
    scopes: ['packages/runtime/src/persistence'], why: 'the stores are the bottom of the runtime',
    patterns: ['../steps/*', '../runs/*', '../handlers/*', '../http/*', '../approvals/*'],
  },
  {
    scopes: ['packages/runtime/src/runs', 'packages/runtime/src/approvals'], why: 'the run service and the approvals rules are below every face (handlers, the HTTP router)',
    patterns: ['../handlers/*', '../http/*'],
  },
  {
    scopes: ['packages/embedded/src'], why: 'the embedded stack (the local AWS) is a library: serve, the tests and the benches use it without the command line',
    paths: ours('cli', 'infra'), patterns: ['@stepforge/cli/*', '@stepforge/runtime/persistence/*'],
  },
  {
    scopes: ['packages/cli/src'],
    why: 'the CLI is a face over the runtime and the embedded stack: it calls the run service, never the stores, and the AWS app is not its business',
    paths: ours('infra'), patterns: ['@stepforge/runtime/persistence/*'],
  },
  {
    scopes: ['infra'], why: 'the AWS app knows no embedded stack and no command line',
    paths: ours('embedded', 'cli'), patterns: ['@stepforge/embedded/*', '@stepforge/cli/*'],
  },
];

/** A front-end's row: front-ends share through source/ and checks/, never through each other. */
function frontEnd(name) {
  const others = ['chain', 'dsl', 'contenox', 'code'].filter((n) => n !== name);
  return {
    scopes: [`packages/compiler/src/${name}`], why: 'front-ends share through source/ and checks/, never through each other',
    patterns: others.map((n) => `../${n}/*`),
  };
}

/** True when folder (or file) `inner` is `outer` or inside it. */
function within(inner, outer) {
  return inner === outer || inner.startsWith(`${outer}/`);
}

/**
 * One `no-restricted-imports` block per scope, carrying every ban that applies to its files: its row's
 * and those of every row whose scope contains it. Blocks run from the outermost scope in, so where
 * several match a file the last one (the innermost, whose bans include the others') is what ESLint applies.
 */
export function importRules(rows = BANS) {
  const scopes = [...new Set(rows.flatMap((row) => row.scopes))].sort((a, b) => a.split('/').length - b.split('/').length);
  return scopes.map((scope) => {
    const applying = rows.filter((r) => r.scopes.some((outer) => within(scope, outer)));
    return {
      files: [scope.endsWith('.ts') ? scope : `${scope}/**`],
      rules: {
        'no-restricted-imports': ['error', {
          paths: applying.flatMap((r) => (r.paths ?? []).map((name) => ({ name, message: r.why }))),
          patterns: applying.filter((r) => (r.patterns ?? []).length > 0).map((r) => ({ group: r.patterns, message: r.why })),
        }],
      },
    };
  });
}

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', '**/cdk.out/**', '.stepforge/**', '**/*.cjs', '**/*.mjs', '**/*.js', 'test/**', 'bench/**', '**/test/**', '**/*.test.ts'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tsParser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts'],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  ...importRules(),
];
