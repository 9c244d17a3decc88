// The bundles' stand-ins for the MCP SDK's OAuth PKCE and zod v3 JSON Schema packages fail by name if ever called.
import { describe, expect, it } from 'vitest';
import pkceChallenge, { zodToJsonSchema } from '../src/bundled/mcpUnreachable.js';

describe('bundled MCP stand-ins', () => {
  it('refuse with a ConfigError that says what the bundles leave out and why', async () => {
    await expect(pkceChallenge()).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/^the Lambda bundles carry no PKCE challenge \(OAuth authorization of MCP servers\): .*headers/),
    });
    expect(() => zodToJsonSchema()).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('no zod v3 to JSON Schema converter') }),
    );
  });
});
