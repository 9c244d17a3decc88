import { describe, it, expect } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProjectSettings } from '../src/projectSettings.js';

/** The error a read fails with: code, message, hint and location. */
function failure(dir: string) {
  try {
    readProjectSettings(dir);
    return undefined;
  } catch (e) {
    const err = e as { code?: string; message: string; hint?: string; location?: { line: number; column: number } };
    return {
      code: err.code,
      message: err.message,
      hint: err.hint,
      location: err.location && { line: err.location.line, column: err.location.column },
    };
  }
}

describe('Function: readProjectSettings', () => {
  const withFile = (text: string | undefined, f: (dir: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-settings-'));
    try {
      if (text !== undefined) writeFileSync(join(dir, 'stepforge.config.json'), text);
      f(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('reads the MCP servers and the outbound HTTP settings, and is empty without a file', () => {
    withFile(undefined, (dir) => expect(readProjectSettings(dir)).toEqual({}));
    withFile(
      '{"http": {"allowHosts": ["api.example.com"], "allowPrivateNetworks": false}, "mcpServers": {"files": {"command": "node", "args": ["s.js"]}}}',
      (dir) => {
        expect(readProjectSettings(dir)).toEqual({
          http: { allowHosts: ['api.example.com'], allowPrivateNetworks: false },
          mcpServers: { files: { command: 'node', args: ['s.js'] } },
        });
      },
    );
  });

  it('fails closed on a file that is not JSON, with its line and column', () => {
    withFile('{\n  "http": { "allowHosts": ["a"], }\n}\n', (dir) => {
      const f = failure(dir);
      expect(f?.code).toBe('invalid_config');
      expect(f?.message).toMatch(/^stepforge\.config\.json is not valid JSON: /);
      expect(f?.location).toEqual({ line: 2, column: 34 });
    });
  });

  it('fails closed on a misspelt or mistyped field, naming it', () => {
    withFile('{"http": {"allowHost": ["a"]}}', (dir) => {
      expect(failure(dir)).toMatchObject({
        code: 'invalid_config',
        message: expect.stringMatching(/stepforge\.config\.json: http: Unrecognized key: "allowHost"$/),
      });
    });
    withFile('{"http": {"allowPrivateNetworks": "yes"}}', (dir) => {
      expect(failure(dir)).toMatchObject({
        code: 'invalid_config',
        message: expect.stringMatching(
          /stepforge\.config\.json: http\.allowPrivateNetworks: Invalid input: expected boolean, received string$/,
        ),
      });
    });
  });

  it('fails closed on an MCP server entry with a misspelt or mistyped field, at the field, when the file is read', () => {
    withFile('{\n  "mcpServers": {\n    "files": {"comand": "node", "args": ["s.js"]}\n  }\n}\n', (dir) => {
      expect(failure(dir)).toMatchObject({
        code: 'invalid_config',
        location: { line: 3, column: 15 },
        message: expect.stringMatching(
          /stepforge\.config\.json: mcpServers\.files\.comand: unknown field 'comand' \(did you mean 'command'\?\)$/,
        ),
        hint: expect.stringContaining(
          'an MCP server is {"url": "http…", "headers"?: {…}} or {"command": "…", "args"?: [...], "env"?: {…}, "cwd"?: "…"}',
        ),
      });
    });
    withFile('{"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp", "header": {"a": "b"}}}}', (dir) => {
      expect(failure(dir)?.message).toMatch(/mcpServers\.web\.header: unknown field 'header' \(did you mean 'headers'\?\)$/);
    });
    withFile('{"mcpServers": {"files": {"command": "node", "args": "s.js"}}}', (dir) => {
      expect(failure(dir)?.message).toMatch(/mcpServers\.files\.args: must be a list of strings$/);
    });
    withFile('{"mcpServers": {"files": {"args": ["s.js"]}}}', (dir) => {
      expect(failure(dir)?.message).toMatch(/mcpServers\.files: needs "url" \(a server over HTTP\) or "command" \(a stdio server\)$/);
    });
    withFile('{"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp", "command": "node"}}}', (dir) => {
      expect(failure(dir)?.message).toMatch(/mcpServers\.web\.command: unknown field 'command'$/);
    });
  });

  it.skipIf(process.getuid?.() === 0)('fails closed on a file it cannot read', () => {
    withFile('{}', (dir) => {
      chmodSync(join(dir, 'stepforge.config.json'), 0o000);
      expect(failure(dir)).toMatchObject({
        code: 'invalid_config',
        message: expect.stringContaining('stepforge.config.json cannot be read: EACCES'),
        hint: 'make it readable, or remove it to run with no project settings',
      });
    });
  });
});
