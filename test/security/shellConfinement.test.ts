// The shell tool against escapes from the fs root, run by run on the embedded stack: absolute paths,
// `..`, symlinks (to a file, to a folder, relative, dangling), a symlink's `..`, hard links, /proc,
// recursion, paths glued to options, and the environment the command sees. Each is refused, no
// run record or CLI output holds what is outside; the allowed commands still work.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttackTally, openAttackProject, OUTSIDE_TEXT, STORE_SECRET, type AttackProject } from './support/toolAttacks.js';

const tally = new AttackTally('shell confinement');
let p: AttackProject;

beforeAll(async () => {
  process.env.STEPFORGE_SECRET_SHELL_PROBE = 'probe-secret-value-5521';
  p = await openAttackProject({
    STEPFORGE_SHELL_ALLOW: 'ls,cat,echo,grep,wc,head,tail,pwd,env,find,sort,xargs',
    STEPFORGE_SECRET_SHELL_PROBE: 'probe-secret-value-5521',
  });
  // File lists inside the root naming files outside it, for the programs that read names from a file.
  writeFileSync(join(p.root, 'names.txt'), '/etc/passwd\0../outside/secret.txt\0');
  writeFileSync(join(p.root, 'names-nl.txt'), '/etc/passwd\n../outside/secret.txt\n');
});
afterAll(async () => {
  delete process.env.STEPFORGE_SECRET_SHELL_PROBE;
  await p.close();
  tally.print();
});

/** What the refusal says, by the rule that refused it. */
const MESSAGES: Record<string, RegExp> = {
  traversal: /^path ".+" is outside the allowed directory$/,
  symlink: /^path ".+" (resolves outside the allowed directory \(symlink escape\)|goes through a dangling symlink)$/,
  hardlink: /^path ".+" is a file with 2 hard links; tools refuse such files/,
  recursive: /^shell refuses (recursive traversal \(".+"\): name the files to read|"find": it walks directory trees)/,
  protected:
    /^path ".+" (is the secret store|is inside the project's \.stepforge folder|resolves into the project's \.stepforge folder), which tools may not touch$/,
  option_path: /^shell refuses a path glued to an option \(".+"\): give the path as its own argument$/,
  file_list:
    /^shell refuses "-.+": it reads the names of the files to open from a file, which cannot be confined; name the files as arguments$/,
  runs_programs:
    /^shell refuses "(xargs|env)": it runs programs or opens files its arguments do not name, which cannot be confined to the allowed directory$/,
};

const ATTACKS: readonly [string, string, string][] = [
  ['an absolute path outside the root', 'cat /etc/passwd', 'traversal'],
  ['a relative path out of the root', 'cat ../outside/secret.txt', 'traversal'],
  ['a symlink to a file outside', 'cat link.txt', 'symlink'],
  ['a symlink to a folder outside', 'cat linkdir/secret.txt', 'symlink'],
  ['a relative symlink out, from a subfolder', 'cat sub/up/secret.txt', 'symlink'],
  ["a symlink's `..` (the kernel climbs from the link's target)", 'cat linkdir/../outside/secret.txt', 'symlink'],
  ['a dangling symlink', 'cat dangling.txt', 'symlink'],
  ['a hard link to a file outside', 'cat hard.txt', 'hardlink'],
  ['the listing of /', 'ls -la /', 'traversal'],
  ['a recursive grep', 'grep -r outside .', 'recursive'],
  ['a recursive grep that follows symlinks', 'grep -R --include=*.txt outside', 'recursive'],
  ['a recursive listing', 'ls -R', 'recursive'],
  ['grep told to recurse into directories', 'grep -d recurse outside linkdir', 'recursive'],
  ["another process's environment under /proc", `cat /proc/${process.pid}/environ`, 'traversal'],
  ['this process under /proc/self', 'head -c 4000 /proc/self/environ', 'traversal'],
  ['a path glued to an option', 'grep -f/etc/passwd x notes.txt', 'option_path'],
  ['a symlink to the secret store glued to an option', 'grep -fkeys.json x notes.txt', 'protected'],
  ['a path in an --option=value', 'grep --file=../outside/secret.txt x notes.txt', 'traversal'],
  ['a path after --', 'cat -- /etc/hostname', 'traversal'],
  ['a program that walks trees by itself', 'find . -name secret.txt', 'recursive'],
  ['file names read from a file (wc)', 'wc --files0-from=names.txt', 'file_list'],
  ['file names read from a file, the option abbreviated', 'wc --files0=names.txt', 'file_list'],
  ['file names read from a file, the option and its value apart', 'wc --files0-from names.txt', 'file_list'],
  ['file names read from a file (sort)', 'sort --files0-from=names.txt', 'file_list'],
  ['file names read from standard input', 'wc --files0-from=-', 'file_list'],
  ['arguments read from a file by xargs', 'xargs -a names-nl.txt cat', 'runs_programs'],
  ['a program run by env', 'env cat ../outside/secret.txt', 'runs_programs'],
];

describe('Security: shell confinement', () => {
  for (const [what, command, reason] of ATTACKS) {
    it(`refuses ${what}: ${command}`, async () => {
      const r = await p.attack('shell', { command });
      const refused =
        r.status === 'FAILED' && r.errorName === 'PolicyDenied' && !r.seen.includes(OUTSIDE_TEXT) && !r.seen.includes('root:x:0:0');
      tally.record(refused);
      expect({ status: r.status, errorName: r.errorName }).toEqual({ status: 'FAILED', errorName: 'PolicyDenied' });
      expect(r.seen).not.toContain(OUTSIDE_TEXT);
      expect(r.seen).not.toContain('root:x:0:0');
      expect(r.message).toMatch(MESSAGES[reason]!);
    });
  }

  it('gives the command an environment with no secret, credential or key of this process', async () => {
    const r = await p.attack('shell', { command: 'env' });
    expect(r.status).toBe('SUCCEEDED');
    const refused = !/STEPFORGE_SECRET|probe-secret-value|AWS_|API_KEY|TOKEN/.test(r.seen.replace(/"command":"env"/g, ''));
    tally.record(refused);
    expect(r.seen).not.toContain('probe-secret-value-5521');
    expect(r.seen).not.toContain('STEPFORGE_SECRET_');
    expect(r.seen).toContain(`HOME=${p.root}`);
  });

  it('redacts every value of the secret store and of STEPFORGE_SECRET_* from what a tool returns, used by the run or not', async () => {
    writeFileSync(join(p.root, 'copied.txt'), `token=${STORE_SECRET}\nprobe=probe-secret-value-5521\n`);
    const r = await p.attack('shell', { command: 'cat copied.txt' });
    expect(r.status).toBe('SUCCEEDED');
    const refused = !r.seen.includes(STORE_SECRET) && !r.seen.includes('probe-secret-value-5521');
    tally.record(refused);
    // Before: the run used no secret, so neither value was known to the redactor, and both were stored.
    expect(r.seen).not.toContain(STORE_SECRET);
    expect(r.seen).not.toContain('probe-secret-value-5521');
    expect(r.seen).toContain('token=***');
    expect(r.seen).toContain('probe=***');
  });

  it('still runs confined commands: a file, a subfolder, a pattern, a count', async () => {
    expect((await p.attack('shell', { command: 'cat notes.txt sub/deep.txt' })).seen).toContain('deep inside');
    expect((await p.attack('shell', { command: 'grep -n inside ./notes.txt' })).seen).toContain('1:hello from inside');
    expect((await p.attack('shell', { command: 'wc -l notes.txt' })).status).toBe('SUCCEEDED');
    expect((await p.attack('shell', { command: 'ls -la sub' })).seen).toContain('deep.txt');
    expect((await p.attack('shell', { command: 'grep inside notes.txt /dev/null' })).seen).toContain('notes.txt:hello from inside');
  });
});
