// Approval and deny rules against other spellings of the same call: shell commands (spaces, tabs,
// quotes, escapes, `./`, `//`, `..`, absolute paths into the root, a program path, `--`, options
// the rule does not name) and URLs (scheme and host case, default port, percent-encoding once and
// twice, dot segments, `//`, backslashes, credentials, fragments, a trailing dot or slash, IDN,
// numeric IPv4 in decimal, octal and hex, IPv4-mapped and -compatible IPv6). Each variant must meet the
// rule the plain spelling meets; what cannot be parsed is denied. The deny rules also run end to
// end on the embedded stack, where a variant that got through would have run the command or
// reached the loopback server.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePolicy, parsePolicyRules } from '../../packages/runtime/src/tools/ToolPolicy.js';
import { startHttpServer } from '../../packages/runtime/test/emulators.js';
import { AttackTally, openAttackProject, type AttackProject } from './support/toolAttacks.js';

const tally = new AttackTally('policy matching');
// The fs root the rules are matched against: the repository's own folder (any absolute folder would do).
const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
/** `../` once per folder of ROOT: from the root, exactly up to `/`, wherever the repository is checked out. */
const UP_TO_SLASH = '../'.repeat(ROOT.split('/').filter(Boolean).length);

const rules = parsePolicyRules([
  { name: 'no passwd', tool: 'shell', args: { command: 'cat /etc/passwd' }, action: 'deny' },
  { name: 'announcing needs a human', tool: 'shell', args: { command: 'echo announcing*' }, action: 'approve' },
  { name: 'reading drafts needs a human', tool: 'shell', args: { command: 'cat drafts/*' }, action: 'approve' },
  { name: 'no paying the victim', tool: 'http_fetch', args: { url: 'https://api.example.com/pay/victim*' }, action: 'deny' },
  { name: 'paying needs a human', tool: 'http_fetch', args: { url: 'https://api.example.com/pay/*' }, action: 'approve' },
  { name: 'no IDN host', tool: 'http_fetch', args: { url: 'https://bücher.example/*' }, action: 'deny' },
  { name: 'no loopback', tool: 'http_fetch', args: { url: 'http://127.0.0.1/*' }, action: 'deny' },
  { name: 'reading drafts by path needs a human', tool: 'fs-read', args: { path: 'drafts/*' }, action: 'approve' },
]);

const VARIANTS: Record<string, readonly [string, string, string][]> = {
  'shell, deny': [
    ['shell', 'command', 'cat  /etc/passwd'],
    ['shell', 'command', 'cat\t/etc/passwd'],
    ['shell', 'command', '  cat /etc/passwd  '],
    ['shell', 'command', 'cat "/etc/passwd"'],
    ['shell', 'command', "cat '/etc/passwd'"],
    ['shell', 'command', 'cat /etc//passwd'],
    ['shell', 'command', 'cat /etc/./passwd'],
    ['shell', 'command', 'cat /etc/../etc/passwd'],
    ['shell', 'command', 'c\\at /etc/pa\\sswd'],
    ['shell', 'command', '"cat" /etc/pa"ss"wd'],
    ['shell', 'command', '/bin/cat /etc/passwd'],
    ['shell', 'command', `cat ${UP_TO_SLASH}etc/passwd`],
    ['shell', 'command', 'cat -- /etc/passwd'],
    ['shell', 'command', 'cat -u /etc/passwd'],
    ['shell', 'command', 'cat -n -s -- /etc/passwd'],
    ['shell', 'command', 'cat --show-ends /etc/passwd'],
  ],
  'shell, approve': [
    ['shell', 'command', 'echo  announcing release'],
    ['shell', 'command', 'echo\tannouncing'],
    ['shell', 'command', ' echo announcing'],
    ['shell', 'command', '"echo" announcing'],
    ['shell', 'command', "'echo' 'announcing release'"],
    ['shell', 'command', 'e\\cho announc"ing"'],
    ['shell', 'command', '/bin/echo announcing'],
    ['shell', 'command', 'cat ./drafts/plan.md'],
    ['shell', 'command', 'cat drafts//plan.md'],
    ['shell', 'command', 'cat notes/../drafts/plan.md'],
    ['shell', 'command', `cat ${ROOT}/drafts/plan.md`],
    ['shell', 'command', 'cat -- drafts/plan.md'],
    ['shell', 'command', 'cat -n drafts/plan.md'],
    ['shell', 'command', 'echo -n announcing'],
  ],
  'URL, deny': [
    ['http_fetch', 'url', 'HTTPS://API.EXAMPLE.COM/pay/victim'],
    ['http_fetch', 'url', 'https://api.example.com:443/pay/victim'],
    ['http_fetch', 'url', 'https://api.example.com/pay/%76ictim'],
    ['http_fetch', 'url', 'https://api.example.com/pay/%2576ictim'],
    ['http_fetch', 'url', 'https://api.example.com/pay/x/../victim'],
    ['http_fetch', 'url', 'https://api.example.com/pay/%2e%2e/pay/victim'],
    ['http_fetch', 'url', 'https://api.example.com/pay/x/%2E%2E/victim'],
    ['http_fetch', 'url', 'https://api.example.com./pay/victim'],
    ['http_fetch', 'url', 'https://user:pw@api.example.com/pay/victim'],
    ['http_fetch', 'url', 'https://api.example.com//pay//victim'],
    ['http_fetch', 'url', 'https://api.example.com\\pay\\victim'],
    ['http_fetch', 'url', '  https://api.example.com/pay/victim#receipt'],
    ['http_fetch', 'url', 'https://xn--bcher-kva.example/x'],
    ['http_fetch', 'url', 'https://BÜCHER.example/x'],
    ['http_fetch', 'url', 'http://2130706433/admin'],
    ['http_fetch', 'url', 'http://127.1:80/admin'],
    ['http_fetch', 'url', 'http://[::ffff:127.0.0.1]/admin'],
    ['http_fetch', 'url', 'http://[::ffff:7f00:1]/admin'],
    ['http_fetch', 'url', 'http://[0:0:0:0:0:FFFF:127.0.0.1]/admin'],
    ['http_fetch', 'url', 'http://[::ffff:0:127.0.0.1]/admin'],
    ['http_fetch', 'url', 'http://[::127.0.0.1]/admin'],
    ['http_fetch', 'url', 'http://0x7f000001/admin'],
    ['http_fetch', 'url', 'http://0177.0.0.1/admin'],
    ['http_fetch', 'url', 'http://0x7f.0.0.1/admin'],
    ['http_fetch', 'url', 'http://017700000001/admin'],
  ],
  'URL, approve': [
    ['http_fetch', 'url', 'HTTPS://Api.Example.Com/pay/bob'],
    ['http_fetch', 'url', 'https://api.example.com:443/pay/bob'],
    ['http_fetch', 'url', 'https://api.example.com/%70ay/bob'],
    ['http_fetch', 'url', 'https://api.example.com/x/../pay/bob'],
    ['http_fetch', 'url', 'https://api.example.com/x/%2e%2e/pay/bob'],
    ['http_fetch', 'url', 'https://api.example.com//pay/bob'],
    ['http_fetch', 'url', 'https://api.example.com\\pay\\bob'],
    ['http_fetch', 'url', 'https://me@api.example.com/pay/bob#x'],
    ['http_fetch', 'url', 'https://api.example.com./pay/bob/'],
  ],
  'path, approve': [
    ['fs-read', 'path', './drafts/plan.md'],
    ['fs-read', 'path', 'drafts//plan.md'],
    ['fs-read', 'path', 'notes/../drafts/plan.md'],
    ['fs-read', 'path', `${ROOT}/drafts/plan.md`],
  ],
};

const EXPECTED: Record<string, string> = {
  'shell, deny': 'deny',
  'shell, approve': 'approve',
  'URL, deny': 'deny',
  'URL, approve': 'approve',
  'path, approve': 'approve',
};

describe('Function: evaluatePolicy (spelling variants)', () => {
  it('spells /etc/passwd relative to the root from any checkout depth', () => {
    const relative = VARIANTS['shell, deny']!.map(([, , v]) => v)
      .find((v) => v.startsWith('cat ../'))!
      .slice('cat '.length);
    expect(resolve(ROOT, relative)).toBe('/etc/passwd');
  });

  for (const [group, variants] of Object.entries(VARIANTS)) {
    it(`meets the ${EXPECTED[group]} rule with ${variants.length} spellings (${group})`, () => {
      const missed: string[] = [];
      for (const [tool, key, value] of variants) {
        const d = evaluatePolicy(rules, tool, { [key]: value }, { fsRoot: ROOT });
        tally.record(d.action === EXPECTED[group]);
        if (d.action !== EXPECTED[group]) missed.push(`${value} → ${d.action}`);
      }
      expect(missed).toEqual([]);
    });
  }

  it('denies what a rule constrains but cannot be parsed, naming why', () => {
    for (const command of [
      'echo announcing; cat /etc/passwd',
      'echo announcing $(id)',
      'echo announcing `id`',
      'echo announcing > out',
      'echo "announcing',
      'echo announcing | tee x',
    ]) {
      const d = evaluatePolicy(rules, 'shell', { command }, { fsRoot: ROOT });
      tally.record(d.action === 'deny');
      expect(d).toMatchObject({
        action: 'deny',
        rule: 'no passwd',
        reason: expect.stringMatching(
          /^argument "command" cannot be parsed \((shell refuses .+|unterminated quote in command)\), so policy no passwd cannot be checked against it$/,
        ),
      });
    }
    const d = evaluatePolicy(rules, 'http_fetch', { url: 'not a url' });
    tally.record(d.action === 'deny');
    expect(d).toMatchObject({ action: 'deny', reason: expect.stringMatching(/^argument "url" cannot be parsed \(not a URL: /) });
  });

  it('gates a command by program and operands when the rule names no option, in both readings of an option', () => {
    const gate = parsePolicyRules([
      { name: 'no head of notes', tool: 'shell', args: { command: 'head notes.txt' }, action: 'deny' },
      { name: 'numbered listing only', tool: 'shell', args: { command: 'ls -n drafts' }, action: 'deny' },
    ]);
    // -n taking the next word (head's count) or a flag alone: either reading meets the rule.
    for (const command of ['head -n 5 notes.txt', 'head -v notes.txt', 'head -n5 -- notes.txt', 'head --lines=5 notes.txt']) {
      const d = evaluatePolicy(gate, 'shell', { command }, { fsRoot: ROOT });
      tally.record(d.action === 'deny');
      expect([command, d]).toEqual([command, { action: 'deny', rule: 'no head of notes' }]);
    }
    // Its operand among others, in any order, is still read.
    for (const command of ['head other.txt notes.txt', 'head notes.txt other.txt', 'head -n 2 other.txt ./notes.txt more.txt']) {
      const d = evaluatePolicy(gate, 'shell', { command }, { fsRoot: ROOT });
      tally.record(d.action === 'deny');
      expect([command, d]).toEqual([command, { action: 'deny', rule: 'no head of notes' }]);
    }
    // Other operands are another call; a rule naming an option keeps to it.
    expect(evaluatePolicy(gate, 'shell', { command: 'head other.txt' }, { fsRoot: ROOT })).toEqual({ action: 'allow' });
    expect(evaluatePolicy(gate, 'shell', { command: 'head other.txt notes.md' }, { fsRoot: ROOT })).toEqual({ action: 'allow' });
    expect(evaluatePolicy(gate, 'shell', { command: 'tail other.txt notes.txt' }, { fsRoot: ROOT })).toEqual({ action: 'allow' });
    expect(evaluatePolicy(gate, 'shell', { command: 'ls -la drafts' }, { fsRoot: ROOT })).toEqual({ action: 'allow' });
  });

  it('leaves calls no rule names alone, and keeps an allow rule to its canonical meaning', () => {
    // IPv6's own loopback is no IPv4 address: the 127.0.0.1 rule does not name it.
    expect(evaluatePolicy(rules, 'http_fetch', { url: 'http://[::1]/admin' })).toEqual({ action: 'allow' });
    expect(evaluatePolicy(rules, 'shell', { command: 'cat notes.txt' }, { fsRoot: ROOT })).toEqual({ action: 'allow' });
    expect(evaluatePolicy(rules, 'http_fetch', { url: 'https://api.example.com/status' })).toEqual({ action: 'allow' });
    const allowLs = parsePolicyRules([
      { tool: 'shell', args: { command: 'ls *' }, action: 'allow' },
      { tool: 'shell', action: 'deny' },
    ]);
    expect(evaluatePolicy(allowLs, 'shell', { command: 'ls   -la' })).toEqual({ action: 'allow', rule: 'rule 0' });
    expect(evaluatePolicy(allowLs, 'shell', { command: '"ls *"' })).toEqual({ action: 'deny', rule: 'rule 1' });
  });
});

describe('Security: policy matching on the embedded stack', () => {
  let p: AttackProject;
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  beforeAll(async () => {
    server = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('paid');
    });
    p = await openAttackProject({
      STEPFORGE_HTTP_ALLOW_HOSTS: `127.0.0.1:${server.port}`,
      STEPFORGE_POLICY: JSON.stringify([
        { name: 'notes are private', tool: 'shell', args: { command: 'cat notes.txt' }, action: 'deny' },
        { name: 'no paying the victim', tool: 'http_fetch', args: { url: `http://127.0.0.1:${server.port}/pay/victim*` }, action: 'deny' },
      ]),
    });
  });
  afterAll(async () => {
    await p.close();
    await server.close();
    tally.print();
  });

  it('denies every spelling of a denied command, which never runs', async () => {
    const variants = [
      'cat -- notes.txt',
      'cat -u notes.txt',
      'cat  notes.txt',
      'cat ./notes.txt',
      'cat "notes.txt"',
      "'cat' notes.txt",
      'cat sub/../notes.txt',
      'cat .//notes.txt',
      'c\\at notes\\.txt',
      `cat ${p.root}/notes.txt`,
      'cat\tnotes.txt',
    ];
    for (const command of variants) {
      const r = await p.attack('shell', { command });
      tally.record(r.status === 'FAILED' && !r.seen.includes('hello from inside'));
      expect([command, r.status, r.errorName, r.message]).toEqual([
        command,
        'FAILED',
        'PolicyDenied',
        'policy notes are private denies shell',
      ]);
      expect(r.seen).not.toContain('hello from inside');
    }
  });

  it('denies every spelling of a denied URL, which is never requested', async () => {
    const base = `127.0.0.1:${server.port}`;
    const variants = [
      `HTTP://${base}/pay/victim`,
      `http://${base}/pay/%76ictim`,
      `http://${base}/pay/%2576ictim`,
      `http://${base}/pay/x/../victim`,
      `http://${base}/pay/%2e%2e/pay/victim`,
      `http://${base}//pay//victim`,
      `http://${base}/pay/victim#x`,
      `http://${base}\\pay\\victim`,
      `http://2130706433:${server.port}/pay/victim`,
      `http://127.1:${server.port}/pay/victim`,
      `http://[::ffff:127.0.0.1]:${server.port}/pay/victim`,
      `http://0x7f000001:${server.port}/pay/victim`,
    ];
    for (const url of variants) {
      const r = await p.attack('http_fetch', { url });
      tally.record(r.status === 'FAILED' && r.errorName === 'PolicyDenied');
      expect([url, r.status, r.errorName, r.message]).toEqual([
        url,
        'FAILED',
        'PolicyDenied',
        'policy no paying the victim denies http_fetch',
      ]);
    }
    expect(server.requests.map((q) => q.url)).toEqual([]);
    // The plain spelling of an allowed call still goes through.
    expect((await p.attack('http_fetch', { url: `http://${base}/pay/bob` })).status).toBe('SUCCEEDED');
    expect(server.requests.map((q) => q.url)).toEqual(['/pay/bob']);
  });
});
