import { describe, expect, it } from 'vitest';
import { echoTool } from '../src/tools/echoTool.js';

describe('Function: echoTool', () => {
  const ctx = {} as Parameters<ReturnType<typeof echoTool>['run']>[1];

  it('returns q unchanged, as Kortecx’s bundled mcp-echo/echo does', async () => {
    expect(await echoTool().run({ q: 'hello, tools' }, ctx)).toBe('hello, tools');
  });

  it('refuses anything but one string q of at most 4,096 characters, by name', async () => {
    await expect(echoTool().run({}, ctx)).rejects.toMatchObject({
      name: 'InvalidInput',
      message: 'echo takes one argument, q (a string); got q = null',
    });
    await expect(echoTool().run({ q: 'x', n: 2 }, ctx)).rejects.toMatchObject({
      name: 'InvalidInput',
      message: 'echo takes one argument, q (a string); got also n',
    });
    await expect(echoTool().run({ q: 'x'.repeat(4097) }, ctx)).rejects.toMatchObject({
      name: 'InvalidInput',
      message: 'echo: q is 4097 characters; at most 4096',
    });
  });
});
