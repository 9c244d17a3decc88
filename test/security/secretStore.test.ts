// The project's .stepforge folder and the secret store, wherever it is configured, against every
// tool, run by run on the embedded stack: the plain path, case variants, `./x/../x`, a symlink to
// the folder and to the file, a hard link to the file, listings. Each is refused and the stored
// secret appears in no run record and no CLI output.
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttackTally, openAttackProject, STORE_SECRET, type AttackProject } from './support/toolAttacks.js';

const tally = new AttackTally('secret store');
const VAULT_SECRET = 'vault-secret-88c1f0aa';
let p: AttackProject;
let elsewhere: AttackProject;

beforeAll(async () => {
  p = await openAttackProject();
  // A second project whose secret store is an ordinary file inside the root, named by configuration.
  elsewhere = await openAttackProject((root) => ({ STEPFORGE_SECRETS_FILE: join(root, 'config', 'vault.json') }));
  mkdirSync(join(elsewhere.root, 'config'));
  writeFileSync(join(elsewhere.root, 'config', 'vault.json'), JSON.stringify({ api_token: VAULT_SECRET }));
  symlinkSync(join(elsewhere.root, 'config', 'vault.json'), join(elsewhere.root, 'vault-link.json'));
  linkSync(join(elsewhere.root, 'config', 'vault.json'), join(elsewhere.root, 'vault-copy.json'));
});
afterAll(async () => {
  await Promise.all([p.close(), elsewhere.close()]);
  tally.print();
});

const PATHS = [
  '.stepforge/secrets.json',
  '.STEPFORGE/secrets.json',
  '.StepForge/secrets.json',
  './.stepforge/../.stepforge/secrets.json',
  'sub/../.stepforge/secrets.json',
  '.stepforge//secrets.json',
  'state/secrets.json',
  'keys.json',
  'hard-keys.json',
];
const PROTECTED =
  /^(path ".+" (is the secret store|is inside the project's \.stepforge folder|resolves into the project's \.stepforge folder), which tools may not touch|shell refuses ".+": the project's \.stepforge folder is not for tools)$/;

async function expectRefused(project: AttackProject, tool: string, args: Record<string, string>, secret: string): Promise<void> {
  const r = await project.attack(tool, args);
  tally.record(r.status === 'FAILED' && r.errorName === 'PolicyDenied' && !r.seen.includes(secret));
  expect({ status: r.status, errorName: r.errorName }).toEqual({ status: 'FAILED', errorName: 'PolicyDenied' });
  expect(r.message).toMatch(PROTECTED);
  expect(r.seen).not.toContain(secret);
}

describe('Security: the secret store and the .stepforge folder', () => {
  for (const path of PATHS) {
    it(`fs-read refuses ${path}`, () => expectRefused(p, 'fs-read', { path }, STORE_SECRET));
    it(`shell cat refuses ${path}`, () => expectRefused(p, 'shell', { command: `cat ${path}` }, STORE_SECRET));
  }
  for (const path of ['.stepforge', '.STEPFORGE', 'state', './sub/../.stepforge/']) {
    it(`fs-list refuses ${path}`, () => expectRefused(p, 'fs-list', { path }, STORE_SECRET));
    it(`shell ls refuses ${path}`, () => expectRefused(p, 'shell', { command: `ls -la ${path}` }, STORE_SECRET));
  }
  it('shell refuses the store as a grep pattern file and a head operand', async () => {
    await expectRefused(p, 'shell', { command: 'grep -f .stepforge/secrets.json x notes.txt' }, STORE_SECRET);
    await expectRefused(p, 'shell', { command: 'head -c 100 keys.json' }, STORE_SECRET);
  });

  it('leaves the folder, and links to the store, out of a listing of the root', async () => {
    const r = await p.attack('fs-list', { path: '.' });
    expect(r.status).toBe('SUCCEEDED');
    const names = (r.seen.match(/"name":"[^"]+"/g) ?? []).map((n) => n.slice(8, -1));
    expect(names).toContain('notes.txt');
    const hidden = ['.stepforge', 'state', 'keys.json', 'hard-keys.json'].filter((n) => !names.includes(n));
    tally.record(hidden.length === 4);
    expect(hidden).toEqual(['.stepforge', 'state', 'keys.json', 'hard-keys.json']);
  });

  for (const path of ['config/vault.json', './config//vault.json', 'config/VAULT.json', 'vault-link.json', 'vault-copy.json']) {
    it(`refuses a secret store configured outside .stepforge: fs-read and cat ${path}`, async () => {
      await expectRefused(elsewhere, 'fs-read', { path }, VAULT_SECRET);
      await expectRefused(elsewhere, 'shell', { command: `cat ${path}` }, VAULT_SECRET);
    });
  }
  it('refuses every path when the fs root itself is inside .stepforge', async () => {
    const inside = await openAttackProject((root) => ({ STEPFORGE_FS_ROOT: join(root, '.stepforge') }));
    try {
      const r = await inside.attack('fs-read', { path: 'secrets.json' });
      tally.record(r.status === 'FAILED' && r.errorName === 'PolicyDenied' && !r.seen.includes(STORE_SECRET));
      expect([r.status, r.errorName]).toEqual(['FAILED', 'PolicyDenied']);
      expect(r.message).toMatch(
        /^the allowed directory \/.+\/\.stepforge is inside a \.stepforge folder, which tools may not touch; set STEPFORGE_FS_ROOT to the project folder$/,
      );
      expect(r.seen).not.toContain(STORE_SECRET);
    } finally {
      await inside.close();
    }
  });

  it('still reads the rest of that folder', async () => {
    writeFileSync(join(elsewhere.root, 'config', 'app.json'), '{"app":"ok"}');
    expect((await elsewhere.attack('fs-read', { path: 'config/app.json' })).seen).toContain('ok');
  });
});
