// Attacks on the approval policy: a policy that cannot be read, or is not where the command looks,
// must never let examples/approval-gate.chain.yaml's gated shell call run unasked. Each attack is
// one `stepforge run`; it counts as refused when the command stops with the named error before
// the call is made. The summary line says how many of them were refused.
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { bufferIo, REPO, tempProject } from '../e2e/support/testIo.js';

const attacks: { name: string; refused: boolean }[] = [];
const projects: { remove(): void }[] = [];

afterAll(() => {
  for (const p of projects) p.remove();
  const refused = attacks.filter((a) => a.refused).length;
  console.log(`security: policy — ${refused}/${attacks.length} refused`);
  for (const a of attacks.filter((x) => !x.refused)) console.log(`  NOT refused: ${a.name}`);
});

/** A copy of the repository's examples/ and workflows/ (the approval gate and its policies). */
function project(): string {
  const p = tempProject('sf-sec-policy-');
  projects.push(p);
  for (const dir of ['examples', 'workflows']) cpSync(join(REPO, dir), join(p.dir, dir), { recursive: true });
  return p.dir;
}

async function stepforge(cwd: string, env: NodeJS.ProcessEnv, ...argv: string[]) {
  const io = bufferIo(cwd, env);
  const code = await main(argv, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

const GATE = ['run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"6.6.6"}', '--in-memory', '--json'];

/**
 * Runs the approval gate under `env` in `dir` and records whether it was refused with
 * `policy_invalid` (and the shell call never made: its output would carry the echo).
 */
async function attack(name: string, dir: string, env: NodeJS.ProcessEnv, argv: readonly string[] = GATE) {
  const r = await stepforge(dir, env, ...argv);
  const error = r.out.trim() ? (JSON.parse(r.out.trim().split('\n').pop()!) as { error?: { class: string; message: string; file?: string; line?: number; column?: number } }).error : undefined;
  const refused = r.code === 1 && error?.class === 'policy_invalid' && !r.out.includes('announcing release 6.6.6');
  attacks.push({ name, refused });
  return { ...r, error };
}

describe('Security: the approval policy fails closed', () => {
  it('refuses a Contenox HITL policy object in STEPFORGE_POLICY, before the gated call runs', async () => {
    const r = await attack('Contenox HITL policy in STEPFORGE_POLICY', project(), { STEPFORGE_POLICY: '{"rules":[{"tool":"shell","action":"approve"}]}' });
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({ class: 'policy_invalid', message: expect.stringContaining('STEPFORGE_POLICY (the approval policy): this is a Contenox HITL policy') });
  });

  it('refuses STEPFORGE_POLICY values that are not an array of rules', async () => {
    const dir = project();
    for (const value of ['{}', '"approve"', 'null', '{"tool":"shell","action":"approve"}', '[{"tool":"shell","action":"ask"}]', '[{"tool":"shell"', '[{"tool":"shell","acton":"approve"}]']) {
      const r = await attack(`STEPFORGE_POLICY=${value}`, dir, { STEPFORGE_POLICY: value });
      expect([r.code, r.error?.class]).toEqual([1, 'policy_invalid']);
    }
  });

  it('refuses a Contenox HITL policy in workflows/policy.json with its file and location, not an internal error', async () => {
    const dir = project();
    writeFileSync(join(dir, 'workflows', 'policy.json'), '{\n  "default_action": "approve",\n  "rules": [{"tools": "local_shell", "tool": "*", "action": "approve"}]\n}\n');
    const r = await attack('Contenox HITL policy in workflows/policy.json', dir, {});
    expect(r.error).toMatchObject({ class: 'policy_invalid', file: join(dir, 'workflows', 'policy.json'), line: 1, column: 1 });
    const text = await stepforge(dir, {}, ...GATE.filter((a) => a !== '--json'));
    expect(text.err).toContain(`error[policy_invalid] ${join(dir, 'workflows', 'policy.json')}:1:1: approval policy: this is a Contenox HITL policy`);
    expect(text.err).not.toContain('error[internal]');
  });

  it('refuses a misspelt rule in examples/policy.json at the field', async () => {
    const dir = project();
    writeFileSync(join(dir, 'examples', 'policy.json'), '[\n  { "tool": "shell", "args": { "command": "echo announcing*" }, "acton": "approve" }\n]\n');
    const r = await attack('misspelt field in examples/policy.json', dir, {});
    expect(r.error).toMatchObject({ class: 'policy_invalid', message: "approval policy: [0].acton: unknown field 'acton' (a rule has name, tool, args and action)", line: 2, column: 65 });
  });

  it('refuses examples/policy.json that is not JSON at its line and column', async () => {
    const dir = project();
    writeFileSync(join(dir, 'examples', 'policy.json'), '[\n  { "tool": "shell", "action": "approve" },\n]\n');
    const r = await attack('examples/policy.json not JSON', dir, {});
    expect(r.error).toMatchObject({ class: 'policy_invalid', line: 3, column: 1 });
  });
});
