// The architecture's import rules (what never imports what), enforced on every source file, and no
// import cycles inside a package. `npm test` runs this before the tests. Style is not linted here:
// the rules are about structure, so that each concept keeps one home.
import tsParser from '@typescript-eslint/parser';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const ours = (...names) => names.map((n) => `@stepforge/${n}`);
const AWS_SDK = ['@aws-sdk/*', '@smithy/*', 'aws-sdk'];

/** A block forbidding `paths` (exact module names) and `patterns` (gitignore-style) to `files`. */
function never(files, why, { paths = [], patterns = [] }) {
  return {
    files,
    rules: {
      'no-restricted-imports': ['error', {
        paths: paths.map((name) => ({ name, message: why })),
        patterns: patterns.length ? [{ group: patterns, message: why }] : [],
      }],
    },
  };
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
  never(['packages/contract/src/**'], 'the contract is the vocabulary every package speaks: it depends on zod only', {
    paths: ['yaml', 'js-yaml', 'jsonata', 'node:fs', 'fs'], patterns: ['@stepforge/*', ...AWS_SDK],
  }),
  never(['packages/compiler/src/**'], 'compiling is pure: no other Stepforge package but the contract, no AWS SDK, no file system', {
    paths: [...ours('engine', 'runtime', 'embedded', 'cli', 'infra'), 'node:fs', 'fs', 'node:fs/promises'], patterns: AWS_SDK,
  }),
  never(['packages/compiler/src/source/**'], "the compiler's source/ sits below every front-end, the IR and the lowering", {
    patterns: ['../chain/*', '../dsl/*', '../contenox/*', '../code/*', '../ir/*', '../lower/*'],
  }),
  never(['packages/compiler/src/chain/**'], 'front-ends share through source/, never through each other', { patterns: ['../dsl/*', '../contenox/*', '../code/*'] }),
  never(['packages/compiler/src/dsl/**'], 'front-ends share through source/, never through each other', { patterns: ['../chain/*', '../contenox/*', '../code/*'] }),
  never(['packages/compiler/src/contenox/**'], 'front-ends share through source/, never through each other', { patterns: ['../chain/*', '../dsl/*', '../code/*'] }),
  never(['packages/compiler/src/code/**'], 'front-ends share through source/, never through each other', { patterns: ['../chain/*', '../dsl/*', '../contenox/*'] }),
  never(['packages/compiler/src/ir/**'], 'the IR sits below the lowering', { patterns: ['../lower/*'] }),
  // Restates the compiler-wide paths: a later block's options for the same rule replace an earlier one's.
  never(['packages/compiler/src/lower/steps/**', 'packages/compiler/src/lower/optimize/**'],
    'a step kind or a fold receives what it needs (a LowerContext, ASL); it never imports the orchestrator, another kind or a fold', {
      paths: [...ours('engine', 'runtime', 'embedded', 'cli', 'infra'), 'node:fs', 'fs', 'node:fs/promises'],
      patterns: [...AWS_SDK, './*', '../lowerWorkflow.js', '../steps/*', '../optimize/*'],
    }),
  never(['packages/engine/src/**'], 'the engine runs any ASL and knows no Stepforge package', { patterns: ['@stepforge/*'] }),
  never(['packages/engine/src/interpreter/**'], 'the interpreter sits below the executions API and the server; the engine knows no Stepforge package', {
    patterns: ['@stepforge/*', '**/executions/*', '**/server/*'],
  }),
  never(['packages/engine/src/interpreter/states/**'], 'a state type receives an ExecutionContext: it never imports Execution.ts or another state type', {
    patterns: ['@stepforge/*', '**/executions/*', '**/server/*', '**/Execution.js', './*'],
  }),
  never(['packages/runtime/src/**'], 'Lambda bundles carry the handlers and the contract, not the compiler; AWS has no engine and no embedded stack', {
    paths: ours('compiler', 'engine', 'embedded', 'cli', 'infra'), patterns: ['@stepforge/compiler/*', '@stepforge/engine/*', '@stepforge/embedded/*', '@stepforge/cli/*'],
  }),
  never(['packages/runtime/src/steps/**'], 'a step knows its envelope, not how it was invoked', { patterns: ['../handlers/*', '../runs/*', '../http/*', '../approvals/*'] }),
  never(['packages/runtime/src/persistence/**'], 'the stores are the bottom of the runtime', { patterns: ['../steps/*', '../runs/*', '../handlers/*', '../http/*', '../approvals/*'] }),
  never(['packages/runtime/src/runs/**', 'packages/runtime/src/approvals/**'], 'the run service and the approvals rules are below every face (handlers, the HTTP router)', { patterns: ['../handlers/*', '../http/*'] }),
  never(['packages/embedded/src/**'], 'the embedded stack (the local AWS) is a library: serve, the tests and the benches use it without the command line', {
    paths: ours('cli', 'infra'), patterns: ['@stepforge/cli/*', '@stepforge/runtime/persistence/*'],
  }),
  never(['packages/cli/src/**'], 'the CLI is a face over the runtime and the embedded stack: it calls the run service, never the stores, and the AWS app is not its business', {
    paths: ours('infra'), patterns: ['@stepforge/runtime/persistence/*'],
  }),
  never(['infra/**'], 'the AWS app knows no embedded stack and no command line', { paths: ours('embedded', 'cli'), patterns: ['@stepforge/embedded/*', '@stepforge/cli/*'] }),
];
