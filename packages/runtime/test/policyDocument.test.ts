// Reading the approval policy and the other JSON configuration: fail closed, with a named error
// that says where — never "no rules" or "no servers" in place of what could not be read.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runtimeConfigFromEnv } from '../src/config/RuntimeConfig.js';
import { parseSecretsFile } from '../src/secrets/SecretResolver.js';
import { readPolicyEnv, readPolicyText } from '../src/tools/PolicyDocument.js';
import { evaluatePolicy } from '../src/tools/ToolPolicy.js';

// ../shared beside the repository root holds the peers' own files.
const CONTENOX_POLICIES = fileURLToPath(new URL('../../../../shared/peers/contenox/policies', import.meta.url));
const PEERS = existsSync(CONTENOX_POLICIES);
// Said in the output, not silently green, when the peers' files are not beside the repository.
if (!PEERS) console.warn(`[peers] SKIPPED: Contenox's HITL policies not found at ${CONTENOX_POLICIES}`);

function caught(f: () => unknown): { code?: string; name?: string; message: string; location?: unknown; details?: unknown; hint?: string } {
  try {
    f();
  } catch (e) {
    return e as never;
  }
  throw new Error('expected an error');
}

describe('Function: readPolicyText', () => {
  it('reads a JSON array of rules', () => {
    expect(readPolicyText('[{"tool":"shell","args":{"command":"echo *"},"action":"approve"}]', { file: 'p.json' })).toEqual([
      { tool: 'shell', args: { command: 'echo *' }, action: 'approve' },
    ]);
    expect(readPolicyText('[]', { env: 'STEPFORGE_POLICY' })).toEqual([]);
  });

  it('reads a Contenox HITL policy: ordered rules on our tools, then default_action as a catch-all', () => {
    const rules = readPolicyText(
      JSON.stringify({
        default_action: 'deny',
        rules: [
          {
            '//': 'a comment',
            tools: 'local_fs',
            tool: 'read_file',
            action: 'approve',
            when: [{ key: 'path', op: 'glob', value: '**/.env' }],
          },
          {
            tools: 'local_shell',
            tool: 'local_shell',
            action: 'allow',
            when: [{ key: 'command', op: 'command_prefix_allowlist', value: 'ls,go test' }],
          },
          { tools: 'git', tool: 'git_commit', action: 'approve' },
        ],
      }),
      { env: 'STEPFORGE_POLICY' },
    );
    expect(rules).toEqual([
      { name: 'rules[0]', tool: 'fs-read', args: { path: '/^(?:.*/)?\\.env$/' }, action: 'approve' },
      { name: 'rules[1]', tool: 'shell', args: { command: '/^(?![^]*[;&|<>$`])\\s*(ls|go test)(\\s|$)/' }, action: 'allow' },
      { name: 'default_action', tool: '*', action: 'deny' },
    ]);
  });

  it.skipIf(!PEERS)('reads every Contenox HITL policy Contenox ships', () => {
    const files = [
      'hitl-policy-default.json',
      'hitl-policy-strict.json',
      'hitl-policy-dev.json',
      'hitl-policy-oracle.json',
      'hitl-policy-acp.json',
      'hitl-policy-acpx.json',
    ];
    for (const f of files) {
      const rules = readPolicyText(readFileSync(join(CONTENOX_POLICIES, f), 'utf8'), { file: f });
      expect(rules.at(-1)).toMatchObject({ name: 'default_action', tool: '*' });
      // Every policy gates at least its catch-all; the default one also gates the shell and file reads.
      if (f === 'hitl-policy-default.json')
        expect(new Set(rules.map((r) => r.tool))).toEqual(new Set(['fs-read', 'fs-list', 'shell', 'http_fetch', '*']));
    }
  });

  it('refuses a malformed Contenox HITL policy with a located policy_invalid, never as "no rules"', () => {
    const text =
      '{\n  "default_action": "approve",\n  "rules": [\n    {"tools": "local_shell", "action": "approve", "when": [{"key": "command", "op": "regex", "value": "rm"}]}\n  ]\n}';
    const e = caught(() => readPolicyText(text, { file: 'hitl.json' }));
    expect([e.code, (e.location as { line: number }).line]).toEqual(['policy_invalid', 4]);
    expect(e.message).toContain('rules[0].when[0].op: unknown condition op "regex"');
    const bad = caught(() => readPolicyText('{"default_action": "maybe", "rules": []}', { env: 'STEPFORGE_POLICY' }));
    expect([bad.code, bad.message]).toEqual([
      'policy_invalid',
      'STEPFORGE_POLICY (the approval policy): default_action: default_action must be approve, allow or deny, got "maybe"',
    ]);
    const allow = caught(() => readPolicyText('{"rules": [{"tool": "shell", "action": "approve", "on_timeout": "allow"}]}', { env: 'P' }));
    expect(allow.message).toContain('on_timeout "allow" is refused: an unanswered approval is denied');
  });

  it('refuses a document that is not an array', () => {
    const e = caught(() => readPolicyText('\n  {"tool":"shell","action":"approve"}', { file: 'workflows/policy.json' }));
    expect([e.code, e.message, e.location]).toEqual([
      'policy_invalid',
      'approval policy: must be a JSON array of policy rules, got an object with "tool", "action"',
      { file: 'workflows/policy.json', line: 2, column: 3 },
    ]);
  });

  it('names text that is not JSON at its line and column', () => {
    const e = caught(() => readPolicyText('[\n  {"tool": "shell", "action": "approve",}\n]', { file: 'examples/policy.json' }));
    expect(e.code).toBe('policy_invalid');
    expect(e.message).toMatch(/^approval policy: not valid JSON: /);
    expect(e.location).toEqual({ file: 'examples/policy.json', line: 2, column: 41 });
  });

  it('names the offending field by path and points at it', () => {
    const text = '[\n  {"tool": "shell", "action": "approve"},\n  {"tool": "fs-read", "acton": "deny"}\n]';
    const e = caught(() => readPolicyText(text, { file: 'p.json' }));
    expect([e.code, e.message, e.location, e.details]).toEqual([
      'policy_invalid',
      "approval policy: [1].acton: unknown field 'acton' (a rule has name, tool, args, action and timeoutSeconds)",
      { file: 'p.json', line: 3, column: 23 },
      { origin: 'p.json', path: '[1].acton' },
    ]);
    const bad = caught(() => readPolicyText('[{"tool": "shell", "action": "ask"}]', { file: 'p.json' }));
    expect([bad.message, bad.location]).toEqual([
      expect.stringMatching(/^approval policy: \[0\]\.action: Invalid option/),
      { file: 'p.json', line: 1, column: 20 },
    ]);
    const args = caught(() => readPolicyText('[{"tool": "shell", "args": {"command": 3}, "action": "deny"}]', { env: 'STEPFORGE_POLICY' }));
    expect(args.message).toMatch(/^STEPFORGE_POLICY \(the approval policy\): \[0\]\.args\.command: /);
  });
});

describe('Function: runtimeConfigFromEnv', () => {
  it('refuses a STEPFORGE_POLICY that is not an array of rules, rather than reading it as no rules', () => {
    const e = caught(() => runtimeConfigFromEnv({ STEPFORGE_POLICY: '{"rules":[{"tool":"shell","action":"ask"}]}' }));
    expect([e.code, (e.details as { origin: string }).origin]).toEqual(['policy_invalid', 'STEPFORGE_POLICY']);
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_POLICY: '"approve"' })).code).toBe('policy_invalid');
  });

  it('refuses STEPFORGE_SHELL values other than on and off, rather than leaving the shell on', () => {
    for (const v of ['false', '0', 'no', 'disabled']) {
      expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_SHELL: v }))).toMatchObject({
        name: 'ConfigError',
        message: `STEPFORGE_SHELL must be one of on, off, got "${v}"`,
      });
    }
    expect(runtimeConfigFromEnv({ STEPFORGE_SHELL: 'off' }).tools.shellEnabled).toBe(false);
  });

  it('refuses MCP servers and state machines of the wrong shape, rather than reading them as none', () => {
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_MCP_SERVERS: '[{"url":"http://x"}]' }))).toMatchObject({
      name: 'ConfigError',
      message: 'STEPFORGE_MCP_SERVERS must be a JSON object, got [{"url":"http://x"}]',
    });
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_MCP_SERVERS: '{"docs":"http://x"}' }))).toMatchObject({
      name: 'ConfigError',
      message:
        'STEPFORGE_MCP_SERVERS: server "docs": must be an object, got "http://x"; an MCP server is {"url": "http…", "headers"?: {…}} or {"command": "…", "args"?: [...], "env"?: {…}, "cwd"?: "…"}',
    });
    // A misspelt field is refused when the variable is read, not found mid-run.
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_MCP_SERVERS: '{"docs":{"comand":"node"}}' }))).toMatchObject({
      name: 'ConfigError',
      message: expect.stringContaining(
        "STEPFORGE_MCP_SERVERS: server \"docs\" field comand: unknown field 'comand' (did you mean 'command'?)",
      ),
    });
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_MCP_SERVERS: '{"docs":{"url":"http://x","command":"node"}}' }))).toMatchObject({
      name: 'ConfigError',
      message: expect.stringContaining('server "docs" field command: unknown field \'command\''),
    });
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_STATE_MACHINES: '{"a":' }))).toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/^STEPFORGE_STATE_MACHINES is not valid JSON: /),
    });
    expect(caught(() => runtimeConfigFromEnv({ STEPFORGE_STATE_MACHINES: '{"a": 1}' }))).toMatchObject({
      name: 'ConfigError',
      message: 'STEPFORGE_STATE_MACHINES: workflow "a" must map to a state machine ARN, got 1',
    });
    expect(runtimeConfigFromEnv({ STEPFORGE_MCP_SERVERS: '{"docs":{"command":"node","args":["s.js"]}}' }).mcpServers).toEqual({
      docs: { command: 'node', args: ['s.js'] },
    });
  });
});

describe('Function: parseSecretsFile', () => {
  it('names a secrets file that is not a JSON object of strings, without echoing its text', () => {
    const bad = caught(() => parseSecretsFile('{"slack": "xoxb-SECRET",}', '.stepforge/secrets.json'));
    expect([bad.name, bad.message]).toEqual([
      'ConfigError',
      '.stepforge/secrets.json:1:25: the secrets file is not valid JSON; it must be an object of secret id → string, e.g. {"slack_token": "xoxb-…"}',
    ]);
    expect(caught(() => parseSecretsFile('["xoxb-SECRET"]', 's.json')).message).toBe(
      's.json: the secrets file must be a JSON object of secret id → string, e.g. {"slack_token": "xoxb-…"}',
    );
    expect(caught(() => parseSecretsFile('{"n": 3}', 's.json')).message).toBe('s.json: secret "n" must be a string, got number');
    expect(parseSecretsFile('{"a": "b"}', 's.json')).toEqual({ a: 'b' });
  });
});

describe.skipIf(!PEERS)('Function: readPolicyText (a Contenox HITL policy decides calls)', () => {
  // Evaluated by the same evaluator as our own rules: first match wins, default_action last.
  const rules = () =>
    readPolicyText(readFileSync(join(CONTENOX_POLICIES, 'hitl-policy-default.json'), 'utf8'), { file: 'hitl-policy-default.json' });

  it("approves, denies and allows as Contenox's default policy says", async () => {
    const { evaluatePolicy } = await import('../src/tools/ToolPolicy.js');
    const r = rules();
    expect(evaluatePolicy(r, 'fs-read', { path: 'home/u/.ssh/id_rsa' }).action).toBe('deny');
    expect(evaluatePolicy(r, 'fs-read', { path: 'app/.env' }).action).toBe('approve');
    expect(evaluatePolicy(r, 'fs-read', { path: 'src/main.go' }).action).toBe('allow');
    expect(evaluatePolicy(r, 'shell', { command: 'go test ./...' }).action).toBe('allow');
    expect(evaluatePolicy(r, 'shell', { command: 'rm -rf build' }).action).toBe('approve');
    expect(evaluatePolicy(r, 'shell', { command: 'mkfs /dev/sda' }).action).toBe('deny');
  });

  it('refuses on_timeout "allow": an approval nobody answers in time is denied', () => {
    const e = caught(() =>
      readPolicyText('{"rules":[{"tools":"local_shell","tool":"local_shell","action":"approve","timeout_s":30,"on_timeout":"allow"}]}', {
        env: 'STEPFORGE_POLICY',
      }),
    );
    expect([e.code, e.message]).toEqual([
      'policy_invalid',
      'STEPFORGE_POLICY (the approval policy): rules[0].on_timeout: on_timeout "allow" is refused: an unanswered approval is denied',
    ]);
    expect(
      readPolicyText('{"rules":[{"tools":"local_shell","tool":"local_shell","action":"approve","timeout_s":30,"on_timeout":"deny"}]}', {
        env: 'P',
      })[0],
    ).toEqual({ name: 'rules[0]', tool: 'shell', action: 'approve', timeoutSeconds: 30 });
  });

  it("keeps an approve rule's timeout_s as its deadline (0 and -1: the runtime's), and refuses one that is no whole number", () => {
    const r = readPolicyText(
      '{"rules":[{"tools":"local_shell","tool":"local_shell","action":"approve","timeout_s":5},{"tools":"local_fs","tool":"read_file","action":"approve","timeout_s":0},{"tool":"http_fetch","action":"approve","timeout_s":-1}]}',
      { env: 'P' },
    );
    expect(r.map((x) => x.timeoutSeconds)).toEqual([5, undefined, undefined, undefined]);
    expect(evaluatePolicy(r, 'shell', { command: 'ls' })).toEqual({ action: 'approve', rule: 'rules[0]', timeoutSeconds: 5 });
    const e = caught(() => readPolicyText('{"rules":[{"tool":"shell","action":"approve","timeout_s":"5s"}]}', { env: 'STEPFORGE_POLICY' }));
    expect([e.code, e.message]).toEqual([
      'policy_invalid',
      'STEPFORGE_POLICY (the approval policy): rules[0].timeout_s: timeout_s must be a whole number of seconds from -1 (no deadline) to 604800 (seven days), got "5s"',
    ]);
  });
});

describe('Function: readPolicyEnv (STEPFORGE_POLICY: JSON text or a policy file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-polenv-'));
  writeFileSync(join(dir, 'policy.json'), '[{"tool":"shell","action":"approve"}]');
  writeFileSync(join(dir, 'hitl'), '{"default_action":"deny","rules":[]}');

  it('reads JSON text as the policy, as before', () => {
    expect(readPolicyEnv(' [{"tool":"shell","action":"deny"}]', 'STEPFORGE_POLICY', dir)).toEqual([{ tool: 'shell', action: 'deny' }]);
  });

  it('reads a path to a policy file, absolute or relative to the folder given', () => {
    expect(readPolicyEnv(join(dir, 'policy.json'), 'STEPFORGE_POLICY', '/')).toEqual([{ tool: 'shell', action: 'approve' }]);
    expect(readPolicyEnv('./policy.json', 'STEPFORGE_POLICY', dir)).toEqual([{ tool: 'shell', action: 'approve' }]);
    expect(readPolicyEnv('./hitl', 'STEPFORGE_POLICY', dir)).toEqual([{ name: 'default_action', tool: '*', action: 'deny' }]);
  });

  it('refuses a file that cannot be read, and a value that is neither JSON nor a path, saying what it holds', () => {
    const missing = caught(() => readPolicyEnv('./nope.json', 'STEPFORGE_POLICY', dir));
    expect([missing.code, missing.message]).toEqual([
      'policy_invalid',
      `STEPFORGE_POLICY names the policy file ${join(dir, 'nope.json')}, which cannot be read (ENOENT)`,
    ]);
    const word = caught(() => readPolicyEnv('strict', 'STEPFORGE_POLICY', dir));
    expect([word.code, word.message]).toEqual([
      'policy_invalid',
      'STEPFORGE_POLICY holds the approval policy as JSON text (a rules array, or a hitl-policy-v1 object) or a path to a policy file, got "strict"',
    ]);
    expect(word.hint).toContain('STEPFORGE_POLICY=./policy.json');
  });
});

describe("Function: readPolicyText (a Contenox HITL policy has exactly Contenox's fields)", () => {
  const at = (e: { location?: unknown }) => e.location as { file: string; line: number; column: number };

  it('refuses a field of our own rules (args) in a Contenox rule, at the field, before any call is judged', () => {
    const text = '{"rules":[{"tool":"shell","args":{"command":"ls*"},"action":"allow"}]}';
    const e = caught(() => readPolicyText(text, { env: 'STEPFORGE_POLICY' }));
    expect(e.code).toBe('policy_invalid');
    expect(e.message).toMatch(
      /^STEPFORGE_POLICY \(the approval policy\): rules\[0\]\.args: unknown field 'args' in rule; a Contenox HITL rule has tools, tool, when, action, timeout_s, on_timeout/,
    );
    expect(at(e)).toEqual({ file: 'STEPFORGE_POLICY', line: 1, column: text.indexOf('"args"') + 1 });
  });

  it('refuses a misspelt field with a did-you-mean, at its line and column in a file', () => {
    const text =
      '{\n  "default_action": "deny",\n  "rules": [\n    {"tools": "local_shell", "whenn": [{"key": "command", "op": "glob", "value": "ls*"}], "action": "allow"}\n  ]\n}';
    const e = caught(() => readPolicyText(text, { file: 'hitl.json' }));
    expect([e.code, at(e)]).toEqual(['policy_invalid', { file: 'hitl.json', line: 4, column: 30 }]);
    expect(e.message).toContain("rules[0].whenn: unknown field 'whenn' in rule (did you mean 'when'?)");
    const cond = caught(() =>
      readPolicyText('{"rules":[{"tool":"shell","action":"approve","when":[{"key":"command","op":"glob","valeu":"x"}]}]}', { env: 'P' }),
    );
    expect(cond.message).toContain("rules[0].when[0].valeu: unknown field 'valeu' in condition (did you mean 'value'?)");
  });

  it('refuses an unknown top-level key and unknown fields of compute, attention and trusted_binaries', () => {
    const top = caught(() => readPolicyText('{"default_action":"deny","rulez":[]}', { env: 'P' }));
    expect(top.message).toBe(
      "P (the approval policy): rulez: unknown field 'rulez' in policy (did you mean 'rules'?); a Contenox HITL policy has version, default_action, rules, compute, attention, trusted_binaries (keys starting with // are comments)",
    );
    for (const [block, field] of [
      ['compute', 'maxTokenz'],
      ['attention', 'allowAgents'],
      ['trusted_binaries', 'dir'],
    ]) {
      const e = caught(() => readPolicyText(`{"default_action":"deny","${block}":{"${field}":1}}`, { env: 'P' }));
      expect([e.code, e.message]).toEqual([
        'policy_invalid',
        expect.stringContaining(`${block}.${field}: unknown field '${field}' in "${block}" block`),
      ]);
    }
  });

  it('refuses trusted_binaries it cannot honour rather than ignoring it; an empty block is inert', () => {
    const e = caught(() =>
      readPolicyText('{"default_action":"deny","trusted_binaries":{"hashes":{"/usr/bin/ls":"ab"}},"rules":[]}', { env: 'P' }),
    );
    expect([e.code, e.message]).toEqual([
      'policy_invalid',
      expect.stringContaining('trusted_binaries.hashes: trusted_binaries.hashes is not supported here'),
    ]);
    expect(readPolicyText('{"default_action":"deny","trusted_binaries":{"dirs":[],"hashes":{}},"rules":[]}', { env: 'P' })).toEqual([
      { name: 'default_action', tool: '*', action: 'deny' },
    ]);
  });

  it("checks timeout_s as Contenox does (-1, no deadline: the runtime's ceiling)", () => {
    expect(readPolicyText('{"rules":[{"tool":"shell","action":"approve","timeout_s":-1}]}', { env: 'P' })[0]).toEqual({
      name: 'rules[0]',
      tool: 'shell',
      action: 'approve',
    });
    for (const [v, text] of [
      ['"30"', 'timeout_s must be a whole number'],
      ['604801', 'timeout_s must be a whole number'],
      ['-2', 'timeout_s must be a whole number'],
    ]) {
      expect(
        caught(() => readPolicyText(`{"rules":[{"tool":"shell","action":"approve","timeout_s":${v}}]}`, { env: 'P' })).message,
      ).toContain(text);
    }
    expect(caught(() => readPolicyText('{"rules":[{"tool":"shell","action":"allow","timeout_s":30}]}', { env: 'P' })).message).toContain(
      'rules[0].timeout_s: timeout_s/on_timeout only apply when action is "approve"',
    );
  });

  it('refuses a tool pattern, which Contenox compares exactly (it would match more here)', () => {
    expect(caught(() => readPolicyText('{"rules":[{"tool":"shell*","action":"deny"}]}', { env: 'P' })).message).toContain(
      'rules[0].tool: tool "shell*" can never match in Contenox',
    );
  });

  it('accepts comments (// keys, $schema) and a version it knows, and refuses another version', () => {
    expect(
      readPolicyText(
        '{"$schema":"x","//":"c","version":1,"rules":[{"//":"c","tool":"shell","action":"deny","when":[{"//":"c","key":"command","op":"glob","value":"rm*"}]}]}',
        { env: 'P' },
      ),
    ).toHaveLength(2);
    expect(caught(() => readPolicyText('{"version":2,"rules":[]}', { env: 'P' })).message).toContain(
      'version 2 is not one this reader knows (1)',
    );
  });
});
