// A project on the embedded stack (in memory, loopback) laid out for attacks on the tools: a root
// with a secret store inside its .stepforge folder, a folder outside the root, and symlinks and hard
// links from the root to both. Each attack is one real run of a one-step chain calling the tool.
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../../packages/embedded/src/EmbeddedStack.js';
import { bufferIo, tempProject } from '../../e2e/support/testIo.js';

/** The value in the secret store; no attack may bring it back. */
export const STORE_SECRET = 'sk-store-7b1e4c9a2d';
/** The content of the file outside the root. */
export const OUTSIDE_TEXT = 'outside-the-root-3f9c';

/** What one attack's run ended as. */
export interface AttackRun {
  readonly status: string;
  readonly errorName?: string;
  readonly message?: string;
  /** Everything the CLI printed and the run's step records, as text (scanned for leaks). */
  readonly seen: string;
}

/** A project laid out for tool attacks, with its stack open. */
export interface AttackProject {
  readonly root: string;
  readonly outside: string;
  readonly stack: EmbeddedStack;
  /** Runs the tool once with `args` through `stepforge run`; the step's outcome and everything printed or stored. */
  attack(tool: string, args: Record<string, string>): Promise<AttackRun>;
  close(): Promise<void>;
}

/** Lays out the project and opens its stack. `env` adds to the stack's environment (the shell allow list, say; given the root). */
export async function openAttackProject(
  env: Record<string, string> | ((root: string) => Record<string, string>) = {},
): Promise<AttackProject> {
  const project = tempProject('sf-sec-tools-');
  const root = join(project.dir, 'root');
  const outside = join(project.dir, 'outside');
  mkdirSync(join(root, '.stepforge'), { recursive: true });
  mkdirSync(join(root, 'sub'));
  mkdirSync(outside);
  writeFileSync(join(root, 'notes.txt'), 'hello from inside\n');
  writeFileSync(join(root, 'sub', 'deep.txt'), 'deep inside\n');
  writeFileSync(join(root, '.stepforge', 'secrets.json'), JSON.stringify({ api_token: STORE_SECRET }));
  writeFileSync(join(outside, 'secret.txt'), `${OUTSIDE_TEXT}\n`);
  writeFileSync(join(outside, 'linked.txt'), `${OUTSIDE_TEXT}\n`);
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
  symlinkSync(outside, join(root, 'linkdir'));
  symlinkSync('../../outside', join(root, 'sub', 'up'));
  symlinkSync(join(outside, 'missing.txt'), join(root, 'dangling.txt'));
  symlinkSync(join(root, '.stepforge'), join(root, 'state'));
  symlinkSync(join(root, '.stepforge', 'secrets.json'), join(root, 'keys.json'));
  linkSync(join(outside, 'linked.txt'), join(root, 'hard.txt'));
  linkSync(join(root, '.stepforge', 'secrets.json'), join(root, 'hard-keys.json'));
  // The project's approval policy (a workflow using shell is refused without one): the test's
  // STEPFORGE_POLICY, else one that gates nothing, as the attacks are on the tools' own confinement.
  const extra = typeof env === 'function' ? env(root) : env;
  writeFileSync(join(project.dir, 'policy.json'), extra.STEPFORGE_POLICY ?? '[]');
  const chain = (tool: string, args: Record<string, string>) =>
    [
      `name: attack-${tool}`,
      // The standard tier wants one model step granted a tool; it runs offline and calls none.
      'chain: "note@web-search > call"',
      'tasks:',
      '  note: { kind: model, prompt: "attack" }',
      '  call:',
      '    kind: tool',
      `    tool: ${tool}`,
      '    args:',
      ...Object.keys(args).map((k) => `      ${k}: "\${input.${k}}"`),
      '',
    ].join('\n');
  // The workflow files live beside the root, not in it: the attacks must not find them by accident.
  const stack = await openStack({
    projectDir: project.dir,
    inMemory: true,
    env: {
      STEPFORGE_LOG_LEVEL: 'SILENT',
      STEPFORGE_FS_ROOT: root,
      STEPFORGE_SECRETS_FILE: join(root, '.stepforge', 'secrets.json'),
      ...extra,
    },
  });
  return {
    root,
    outside,
    stack,
    async attack(tool, args) {
      const file = join(project.dir, `attack-${tool}.chain.yaml`);
      writeFileSync(file, chain(tool, args));
      const io = bufferIo(project.dir);
      await main(['run', file, '--input', JSON.stringify(args), '--json'], io);
      const printed = io.stdout() + io.stderr();
      const result = JSON.parse(io.stdout() || '{}') as { runId?: string; status?: string; error?: { error?: string; cause?: string } };
      const steps = result.runId ? await stack.runtime.runs.listSteps(result.runId) : [];
      const run = result.runId ? await stack.runtime.runs.getRun(result.runId) : undefined;
      const events = result.runId ? await stack.runtime.runs.listEvents(result.runId) : [];
      const step = steps.find((s) => s.stepId === 'call') as { error?: { name?: string; message?: string } } | undefined;
      // A call the policy refuses before it runs leaves no step record, only its refusal event.
      const refusal = events.find((e) => e.stepId === 'call' && /^(PolicyDenied|ToolNotGranted)$/.test(e.type));
      const errorName = step?.error?.name ?? refusal?.type;
      const message = step?.error?.message ?? (refusal?.detail as { message?: string } | undefined)?.message;
      return {
        status: result.status ?? 'NO_RUN',
        ...(errorName ? { errorName } : {}),
        ...(message ? { message } : {}),
        seen: printed + JSON.stringify([run, steps, events]),
      };
    },
    async close() {
      await stack.close();
      project.remove();
    },
  };
}

/** Counts refused attacks and prints the summary line a security test file ends with. */
export class AttackTally {
  #tried = 0;
  #refused = 0;
  constructor(readonly topic: string) {}

  record(refused: boolean): void {
    this.#tried++;
    if (refused) this.#refused++;
  }

  get tried(): number {
    return this.#tried;
  }
  get refused(): number {
    return this.#refused;
  }

  print(): void {
    console.log(`security: ${this.topic} — ${this.#refused}/${this.#tried} attacks refused`);
  }
}
