import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveUserFunction } from '@stepforge/runtime';

describe('Function: resolveUserFunction', () => {
  it("names an ambiguous function's folder relative to the working directory (the project), never as a machine path", () => {
    const dir = mkdtempSync(join(process.cwd(), 'packages', 'runtime', 'test', '.ambiguous-'));
    try {
      writeFileSync(join(dir, 'echo.py'), 'def handler(input, context):\n    return 1\n');
      writeFileSync(join(dir, 'echo.js'), 'export default async () => 1;\n');
      const shown = relative(process.cwd(), dir);
      expect(() => resolveUserFunction(dir, 'echo')).toThrowError(
        expect.objectContaining({
          name: 'ConfigError',
          message:
            `function "echo" is ambiguous: ${shown} has both echo.py and echo.js; name the one to run with its extension ` +
            '(function: echo.py or function: echo.js, declared under functions: with the same name), or remove the other',
          details: { function: 'echo', candidates: ['echo.py', 'echo.js'] },
        }),
      );
      expect(resolveUserFunction(dir, 'echo.js')).toMatchObject({ language: 'javascript', relative: 'echo.js' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
