// Attacks on the approval policy: a policy that cannot be read, or is not where the command looks,
// must never let examples/approval-gate.chain.yaml's gated shell call run unasked. Each attack is
// one `stepforge run`; it counts as refused when the command stops with the named error before
// the call is made. The summary line says how many of them were refused.
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
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
  const error = r.out.trim()
    ? (
        JSON.parse(r.out.trim().split('\n').pop()!) as {
          error?: { class: string; message: string; file?: string; line?: number; column?: number };
        }
      ).error
    : undefined;
  const refused = r.code === 1 && error?.class === 'policy_invalid' && !r.out.includes('announcing release 6.6.6');
  attacks.push({ name, refused });
  return { ...r, error };
}

describe('Security: the approval policy fails closed', () => {
  it('refuses a malformed Contenox HITL policy in STEPFORGE_POLICY, before the gated call runs', async () => {
    const r = await attack('malformed Contenox HITL policy in STEPFORGE_POLICY', project(), {
      STEPFORGE_POLICY: '{"rules":[{"tool":"shell","action":"ask"}]}',
    });
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({
      class: 'policy_invalid',
      message: 'STEPFORGE_POLICY (the approval policy): rules[0].action: action must be approve, allow or deny, got "ask"',
    });
  });

  it('refuses a Contenox HITL rule with a field Contenox does not have (our args, a misspelt when), at the field, before the stack opens', async () => {
    const dir = project();
    const value = '{"rules":[{"tool":"shell","args":{"command":"ls*"},"action":"allow"}]}';
    // Not --in-memory: opening the stack would make .stepforge/ in the project (and join other runs' lines).
    const r = await attack(
      'Contenox HITL rule with args in STEPFORGE_POLICY',
      dir,
      { STEPFORGE_POLICY: value },
      GATE.filter((a) => a !== '--in-memory'),
    );
    expect(r.error).toMatchObject({
      class: 'policy_invalid',
      file: 'STEPFORGE_POLICY',
      line: 1,
      column: value.indexOf('"args"') + 1,
      message: expect.stringMatching(/^STEPFORGE_POLICY \(the approval policy\): rules\[0\]\.args: unknown field 'args' in rule;/),
    });
    expect(r.err).not.toContain('policy: STEPFORGE_POLICY');
    expect(existsSync(join(dir, '.stepforge'))).toBe(false);
    const whenn = await attack('Contenox HITL rule with whenn in STEPFORGE_POLICY', dir, {
      STEPFORGE_POLICY: '{"rules":[{"tool":"shell","whenn":[{"key":"command","op":"glob","value":"ls*"}],"action":"allow"}]}',
    });
    expect(whenn.error?.message).toContain("rules[0].whenn: unknown field 'whenn' in rule (did you mean 'when'?)");
  });

  it('refuses STEPFORGE_POLICY values that are not an array of rules', async () => {
    const dir = project();
    for (const value of [
      '{}',
      '"approve"',
      'null',
      '{"tool":"shell","action":"approve"}',
      '[{"tool":"shell","action":"ask"}]',
      '[{"tool":"shell"',
      '[{"tool":"shell","acton":"approve"}]',
    ]) {
      const r = await attack(`STEPFORGE_POLICY=${value}`, dir, { STEPFORGE_POLICY: value });
      expect([r.code, r.error?.class]).toEqual([1, 'policy_invalid']);
    }
  });

  it('refuses a malformed Contenox HITL policy in workflows/policy.json with its file and location, not an internal error', async () => {
    const dir = project();
    writeFileSync(
      join(dir, 'workflows', 'policy.json'),
      '{\n  "default_action": "approve",\n  "rules": [{"tools": "local_shell", "tool": "*", "action": "approve", "when": [{"op": "regex"}]}]\n}\n',
    );
    const r = await attack('malformed Contenox HITL policy in workflows/policy.json', dir, {});
    expect(r.error).toMatchObject({ class: 'policy_invalid', file: join(dir, 'workflows', 'policy.json'), line: 3 });
    const text = await stepforge(dir, {}, ...GATE.filter((a) => a !== '--json'));
    expect(text.err).toContain(`error[policy_invalid] ${join(dir, 'workflows', 'policy.json')}:3:`);
    expect(text.err).toContain('unknown condition op "regex"');
    expect(text.err).not.toContain('error[internal]');
  });

  it('refuses a misspelt rule in examples/policy.json at the field', async () => {
    const dir = project();
    writeFileSync(
      join(dir, 'examples', 'policy.json'),
      '[\n  { "tool": "shell", "args": { "command": "echo announcing*" }, "acton": "approve" }\n]\n',
    );
    const r = await attack('misspelt field in examples/policy.json', dir, {});
    expect(r.error).toMatchObject({
      class: 'policy_invalid',
      message: "approval policy: [0].acton: unknown field 'acton' (a rule has name, tool, args, action and timeoutSeconds)",
      line: 2,
      column: 65,
    });
  });

  it('refuses examples/policy.json that is not JSON at its line and column', async () => {
    const dir = project();
    writeFileSync(join(dir, 'examples', 'policy.json'), '[\n  { "tool": "shell", "action": "approve" },\n]\n');
    const r = await attack('examples/policy.json not JSON', dir, {});
    expect(r.error).toMatchObject({ class: 'policy_invalid', line: 3, column: 1 });
  });
});

/**
 * Starts the approval gate in `cwd` (in-process, so `approvals` commands there share its in-memory
 * stack) and waits for its gated call to ask for approval, then rejects it. Refused: the call asked
 * and was never made.
 */
async function gateFrom(name: string, cwd: string, file: string, env: NodeJS.ProcessEnv = {}) {
  const io = bufferIo(cwd, env);
  const running = main(['run', file, '--input', '{"version":"6.6.6"}', '--in-memory', '--json'], io);
  let asked: { approvalId: string; tool: string } | undefined;
  let ended = false;
  void running.finally(() => {
    ended = true;
  });
  for (let i = 0; i < 400 && !asked && !ended; i++) {
    await new Promise((r) => setTimeout(r, 25));
    // Only once the run holds its in-memory stack (it prints the policy then): before, `approvals` would open one of its own.
    if (!io.stderr().includes('policy:')) continue;
    const listed = await stepforge(cwd, env, 'approvals', 'list', '--json');
    if (listed.code === 0) asked = (JSON.parse(listed.out) as { approvals: { approvalId: string; tool: string }[] }).approvals[0];
  }
  if (asked) expect((await stepforge(cwd, env, 'approvals', 'reject', asked.approvalId)).code).toBe(0);
  const code = await running;
  const result = JSON.parse(io.stdout()) as { status: string; output: unknown };
  attacks.push({
    name,
    refused: asked?.tool === 'shell' && result.status === 'FAILED' && !io.stdout().includes('announcing release 6.6.6'),
  });
  return { code, asked, result, stderr: io.stderr() };
}

describe("Security: the approval policy is the workflow's, wherever the command runs", () => {
  it('gates examples/approval-gate.chain.yaml run from another folder by its own policy, and says which', async () => {
    const dir = project();
    const elsewhere = tempProject('sf-sec-elsewhere-');
    projects.push(elsewhere);
    const r = await gateFrom('approval gate run from another folder', elsewhere.dir, join(dir, 'examples', 'approval-gate.chain.yaml'));
    expect(r.asked).toMatchObject({ tool: 'shell' });
    expect([r.code, r.result.status]).toEqual([1, 'FAILED']);
    expect(r.stderr).toContain(
      `policy: ${join(dir, 'examples', 'policy.json')} (1 rule), then ${join(dir, 'workflows', 'policy.json')} (1 rule)\n`,
    );
  });

  it('gates it from a sub-folder of the project too (the policy does not follow the current folder)', async () => {
    const dir = project();
    const r = await gateFrom('approval gate run from a sub-folder', join(dir, 'workflows'), '../examples/approval-gate.chain.yaml');
    expect(r.asked).toMatchObject({ tool: 'shell' });
  });

  it('prints the policy in force at the start of a run, on stdout without --json', async () => {
    const dir = project();
    const r = await stepforge(dir, {}, 'run', 'workflows/research-brief.chain.yaml', '--input', '{"topic":"x"}', '--in-memory');
    expect(r.out.split('\n')[0]).toBe('policy: workflows/policy.json (1 rule)');
  });

  it('refuses a workflow that uses shell when no policy is found at all, before anything runs', async () => {
    const lone = tempProject('sf-sec-lone-');
    projects.push(lone);
    cpSync(join(REPO, 'examples', 'approval-gate.chain.yaml'), join(lone.dir, 'gate.chain.yaml'));
    // A project that has run before: its root is its own folder, whatever the folders above it hold
    // (a stray .stepforge/ in the temporary folder would otherwise make that the project's root).
    mkdirSync(join(lone.dir, '.stepforge'));
    const r = await stepforge(lone.dir, {}, 'run', 'gate.chain.yaml', '--input', '{"version":"6.6.6"}', '--in-memory', '--json');
    const error = (JSON.parse(r.out) as { error: { class: string; message: string; hint: string } }).error;
    attacks.push({ name: 'gated workflow with no policy anywhere', refused: r.code === 1 && error.class === 'policy_missing' });
    expect(error).toMatchObject({
      class: 'policy_missing',
      message: `workflow 'approval-gate' uses shell (step publish), which can change things outside the run, but no approval policy was found (looked for ${join(lone.dir, 'policy.json')}, ${join(lone.dir, 'workflows', 'policy.json')}); without one every such call would run unasked`,
      hint: `add ${join(lone.dir, 'policy.json')}, e.g. [{"tool":"shell","action":"approve"}] ([] allows every granted call), or set STEPFORGE_POLICY`,
    });
    // An explicit policy, even one with no rules, is a decision: the run goes ahead.
    writeFileSync(join(lone.dir, 'policy.json'), '[]\n');
    const allowed = await stepforge(lone.dir, {}, 'run', 'gate.chain.yaml', '--input', '{"version":"6.6.6"}', '--in-memory', '--json');
    expect(JSON.parse(allowed.out)).toMatchObject({ status: 'SUCCEEDED' });
    expect(allowed.err).toContain(`policy: policy.json (0 rules)\n`);
  });
});

describe('Security: a malformed policy stops only the commands that need it', () => {
  it('lists and shows stored runs with a broken workflows/policy.json; run refuses it by name, at the place', async () => {
    const dir = project();
    const first = await stepforge(dir, {}, 'run', 'workflows/research-brief.chain.yaml', '--input', '{"topic":"x"}', '--json');
    expect(first.code).toBe(0);
    const { runId } = JSON.parse(first.out) as { runId: string };
    const broken = '[{"tool": "http_fetch", "action": "approve"},,]\n';
    writeFileSync(join(dir, 'workflows', 'policy.json'), broken);
    const listed = await stepforge(dir, {}, 'runs', 'list', '--json');
    expect([listed.code, (JSON.parse(listed.out) as { runs: { runId: string }[] }).runs.map((r) => r.runId)]).toEqual([0, [runId]]);
    expect((await stepforge(dir, {}, 'runs', 'show', runId, '--json')).code).toBe(0);
    expect((await stepforge(dir, {}, 'approvals', 'list', '--json')).code).toBe(0);
    const again = await attack('malformed workflows/policy.json at run', dir, {}, [
      'run',
      'workflows/research-brief.chain.yaml',
      '--input',
      '{"topic":"x"}',
      '--json',
    ]);
    expect(again.error).toMatchObject({
      class: 'policy_invalid',
      file: join(dir, 'workflows', 'policy.json'),
      line: 1,
      column: broken.indexOf(',,') + 2,
    });
  });
});
