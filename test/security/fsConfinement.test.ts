// fs-read and fs-list against escapes from the fs root, run by run on the embedded stack: absolute
// paths, `..`, symlinks (to a file, a folder, relative, dangling, and a symlink's `..`, which the
// kernel climbs from the link's target), hard links and /proc. Each is refused, and no run record
// or CLI output holds what is outside; reads and listings inside still work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttackTally, openAttackProject, OUTSIDE_TEXT, type AttackProject } from './support/toolAttacks.js';

const tally = new AttackTally('fs confinement');
let p: AttackProject;

beforeAll(async () => {
  p = await openAttackProject();
});
afterAll(async () => {
  await p.close();
  tally.print();
});

const ATTACKS: readonly [string, string, string, RegExp][] = [
  ['fs-read', 'an absolute path outside the root', '/etc/passwd', /^path "\/etc\/passwd" is outside the allowed directory$/],
  ['fs-read', 'a relative path out of the root', '../outside/secret.txt', /is outside the allowed directory$/],
  ['fs-read', 'a symlink to a file outside', 'link.txt', /resolves outside the allowed directory \(symlink escape\)$/],
  ['fs-read', 'a symlink to a folder outside', 'linkdir/secret.txt', /resolves outside the allowed directory \(symlink escape\)$/],
  [
    'fs-read',
    'a relative symlink out, from a subfolder',
    'sub/up/secret.txt',
    /resolves outside the allowed directory \(symlink escape\)$/,
  ],
  ['fs-read', "a symlink's `..`", 'linkdir/../outside/secret.txt', /resolves outside the allowed directory \(symlink escape\)$/],
  ['fs-read', 'a dangling symlink', 'dangling.txt', /goes through a dangling symlink$/],
  ['fs-read', 'a hard link to a file outside', 'hard.txt', /is a file with 2 hard links; tools refuse such files/],
  ['fs-read', "a process's environment under /proc", `/proc/${process.pid}/environ`, /is outside the allowed directory$/],
  ['fs-list', 'the listing of /', '/', /^path "\/" is outside the allowed directory$/],
  ['fs-list', 'the listing of the parent', '..', /is outside the allowed directory$/],
  ['fs-list', 'a symlinked folder outside', 'linkdir', /resolves outside the allowed directory \(symlink escape\)$/],
  ['fs-list', "a symlink's `..`", 'linkdir/..', /resolves outside the allowed directory \(symlink escape\)$/],
];

describe('Security: fs confinement', () => {
  for (const [tool, what, path, message] of ATTACKS) {
    it(`${tool} refuses ${what}: ${path}`, async () => {
      const r = await p.attack(tool, { path });
      tally.record(
        r.status === 'FAILED' && r.errorName === 'PolicyDenied' && !r.seen.includes(OUTSIDE_TEXT) && !r.seen.includes('root:x:0:0'),
      );
      expect({ status: r.status, errorName: r.errorName }).toEqual({ status: 'FAILED', errorName: 'PolicyDenied' });
      expect(r.message).toMatch(message);
      expect(r.seen).not.toContain(OUTSIDE_TEXT);
      expect(r.seen).not.toContain('root:x:0:0');
    });
  }

  it('still reads and lists inside the root, through `..` that stays inside', async () => {
    expect((await p.attack('fs-read', { path: 'sub/../notes.txt' })).seen).toContain('hello from inside');
    const listed = await p.attack('fs-list', { path: 'sub' });
    expect(listed.status).toBe('SUCCEEDED');
    expect(listed.seen).toContain('deep.txt');
  });
});
