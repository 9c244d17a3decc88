import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests import the workspace packages from source, so `npm test` never depends on a stale dist/.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@stepforge\/contract$/, replacement: src('./packages/contract/src/index.ts') },
      { find: /^@stepforge\/compiler$/, replacement: src('./packages/compiler/src/index.ts') },
      { find: /^@stepforge\/engine$/, replacement: src('./packages/engine/src/index.ts') },
      { find: /^@stepforge\/runtime$/, replacement: src('./packages/runtime/src/index.ts') },
      { find: /^@stepforge\/runtime\/importFile$/, replacement: src('./packages/runtime/src/userfn/importFile.ts') },
      { find: /^@stepforge\/embedded$/, replacement: src('./packages/embedded/src/index.ts') },
      { find: /^@stepforge\/embedded\/project$/, replacement: src('./packages/embedded/src/project.ts') },
      { find: /^@stepforge\/embedded\/stackFailure$/, replacement: src('./packages/embedded/src/stackFailure.ts') },
      { find: /^@stepforge\/cli$/, replacement: src('./packages/cli/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'infra/test/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', '**/cdk.out/**'],
    globalSetup: ['test/support/tmpRoot.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
