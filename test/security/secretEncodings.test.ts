// A secret in every encoding, against everything the embedded stack stores or prints. For each
// encoding, workflows on the on-disk embedded stack use a secret (holding `"`, `\`, a space, `/`,
// `+`, `&`, `=` and a non-ASCII letter) through a JavaScript and a Python function that return it,
// print it and throw it in that encoding (once with a stack trace), with an output big enough to
// be stored as a blob; and a secret URL goes through http_fetch. Then every DynamoDB item (through
// the SDK), every file under .stepforge/ but the secret store, and everything the CLI printed (run
// results, `runs show`, `runs list`) are scanned for the secret in every encoding: 0 hits. Nor may
// a stored stack trace name a path of this installation.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { startHttpServer } from '../../packages/runtime/test/emulators.js';
import { bufferIo, REPO, tempProject } from '../e2e/support/testIo.js';
import { AttackTally } from './support/toolAttacks.js';

const SECRET = 'p@ss "w\\rd"/+&= é-4217';
const ENCODINGS = ['raw', 'json', 'json2', 'uri', 'form', 'base64', 'base64url', 'basic'] as const;
const hasPython = spawnSync('python3', ['--version']).status === 0;

const JS_FUNCTIONS = `
function encode(secret, encoding) {
  switch (encoding) {
    case 'raw': return secret;
    case 'json': return JSON.stringify({ key: secret });
    case 'json2': return JSON.stringify(JSON.stringify({ key: secret }));
    case 'uri': return 'https://api.example.com/v1?key=' + encodeURIComponent(secret);
    case 'form': return new URLSearchParams({ key: secret, user: 'me' }).toString();
    case 'base64': return Buffer.from(secret).toString('base64');
    case 'base64url': return Buffer.from('x' + secret).toString('base64url');
    case 'basic': return 'Basic ' + Buffer.from('user:' + secret).toString('base64');
  }
  throw new Error('unknown encoding ' + encoding);
}
export async function emit(input, { secrets }) {
  const e = encode(secrets.KEY, input.encoding);
  console.log('calling with', e);
  console.error({ header: e });
  process.stdout.write('raw write ' + e + '\\n');
  return { value: e, nested: { text: 'key=' + e }, padding: 'x'.repeat(70000) + e };
}
export async function explode(input, { secrets }) {
  throw new TypeError('bad key ' + encode(secrets.KEY, input.encoding));
}
`;

const PY_FUNCTION = `
import base64, json, urllib.parse

def encode(secret, encoding):
    return {
        "raw": secret,
        "json": json.dumps({"key": secret}),
        "json2": json.dumps(json.dumps({"key": secret})),
        "uri": "https://api.example.com/v1?key=" + urllib.parse.quote(secret, safe=""),
        "form": urllib.parse.urlencode({"key": secret, "user": "me"}),
        "base64": base64.b64encode(secret.encode()).decode(),
        "base64url": base64.urlsafe_b64encode(("x" + secret).encode()).decode().rstrip("="),
        "basic": "Basic " + base64.b64encode(("user:" + secret).encode()).decode(),
    }[encoding]

def py_emit(encoding="", KEY="", **kwargs):
    e = encode(KEY, encoding)
    print("calling with", e)
    return {"value": e, "ascii": json.dumps({"k": e}), "padding": "y" * 70000 + e}

def py_explode(encoding="", KEY="", **kwargs):
    raise ValueError("bad key " + encode(KEY, encoding))
`;

function dsl(name: string, steps: string[]): string {
  return [
    `document: { dsl: "1.0", name: ${name}, version: "0.1.0" }`,
    `functions: { emit: {}, explode: {}${hasPython ? ', py_emit: {}, py_explode: {}' : ''} }`,
    'secrets:',
    '  key: $secret:leak-key',
    'steps:',
    ...steps,
    '',
  ].join('\n');
}
const step = (name: string, fn: string) => [
  `  ${name}:`,
  '    call: function',
  `    function: ${fn}`,
  '    secrets: { KEY: key }',
  '    input: { encoding: "${ input.encoding }" }',
];

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('Security: every encoding of a secret, everywhere it is stored or printed', () => {
  const project = tempProject('sf-sec-enc-');
  const tally = new AttackTally('secret encodings');
  let stack: EmbeddedStack;
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  let hookUrl: string;
  let printed = '';
  const cli = async (...argv: string[]) => {
    const io = bufferIo(project.dir);
    const code = await main(argv, io);
    printed += io.stdout() + io.stderr();
    return { code, out: io.stdout() };
  };

  beforeAll(async () => {
    server = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hooked');
    });
    hookUrl = `http://127.0.0.1:${server.port}/hooks/T0K3N-path?sig=a b`;
    mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
    mkdirSync(join(project.dir, '.stepforge'), { recursive: true });
    writeFileSync(
      join(project.dir, 'functions', 'user', 'emit.mjs'),
      JS_FUNCTIONS.replace('export async function explode', 'async function explode') + '\nexport default emit;\n',
    );
    writeFileSync(
      join(project.dir, 'functions', 'user', 'explode.mjs'),
      JS_FUNCTIONS.replace('export async function emit', 'async function emit') + '\nexport default explode;\n',
    );
    writeFileSync(join(project.dir, 'functions', 'user', 'py_emit.py'), PY_FUNCTION);
    writeFileSync(join(project.dir, 'functions', 'user', 'py_explode.py'), PY_FUNCTION);
    writeFileSync(join(project.dir, '.stepforge', 'secrets.json'), JSON.stringify({ 'leak-key': SECRET, 'hook-url': hookUrl }));
    writeFileSync(join(project.dir, 'emit.yaml'), dsl('emit', [...step('js', 'emit'), ...(hasPython ? step('py', 'py_emit') : [])]));
    writeFileSync(join(project.dir, 'explode.yaml'), dsl('explode', step('boom', 'explode')));
    writeFileSync(join(project.dir, 'py-explode.yaml'), dsl('py-explode', step('boom', 'py_explode')));
    writeFileSync(
      join(project.dir, 'hook.chain.yaml'),
      [
        'name: hook',
        'chain: "note@web-search > fetch"',
        'tasks:',
        '  note: { kind: model, prompt: "hook" }',
        '  fetch:',
        '    kind: tool',
        '    tool: http_fetch',
        '    args: { url: "$secret:hook-url" }',
        '',
      ].join('\n'),
    );
    // Log at INFO, so what the functions print reaches the (redacted) log lines the CLI's process writes.
    stack = await openStack({
      projectDir: project.dir,
      env: { ...process.env, STEPFORGE_LOG_LEVEL: 'INFO', STEPFORGE_HTTP_ALLOW_HOSTS: `127.0.0.1:${server.port}` },
    });
  });
  afterAll(async () => {
    await stack.close();
    await server.close();
    project.remove();
    tally.print();
  });

  it('runs the workflows: functions return, print and throw the secret in each encoding', async () => {
    // The runtime's log lines (what the functions printed among them) go to this process's stdout
    // and stderr: kept with the CLI output to be scanned.
    const writes = [process.stdout.write, process.stderr.write] as const;
    const keep = (chunk: unknown) => {
      printed += String(chunk);
      return true;
    };
    process.stdout.write = keep as typeof process.stdout.write;
    process.stderr.write = keep as typeof process.stderr.write;
    try {
      await runAll();
    } finally {
      [process.stdout.write, process.stderr.write] = writes;
    }
    // What the functions printed (console.* and a direct stdout write) reached the log, redacted.
    expect(printed).toContain('function output');
    expect(printed).toContain('raw write ***');
  });

  async function runAll(): Promise<void> {
    for (const encoding of ENCODINGS) {
      const input = JSON.stringify({ encoding });
      const ok = await cli('run', 'emit.yaml', '--input', input, '--json');
      expect([encoding, ok.code, JSON.parse(ok.out).status]).toEqual([encoding, 0, 'SUCCEEDED']);
      const boom = await cli('run', 'explode.yaml', '--input', input, '--json');
      expect([encoding, JSON.parse(boom.out).status]).toEqual([encoding, 'FAILED']);
      if (hasPython) expect(JSON.parse((await cli('run', 'py-explode.yaml', '--input', input, '--json')).out).status).toBe('FAILED');
    }
    expect(JSON.parse((await cli('run', 'hook.chain.yaml', '--json')).out).status).toBe('SUCCEEDED');
    expect(server.requests.map((r) => r.url)).toEqual(['/hooks/T0K3N-path?sig=a%20b']);
    const { out } = await cli('runs', 'list', '--json');
    for (const { runId } of JSON.parse(out).runs as { runId: string }[]) await cli('runs', 'show', runId);
  }

  it('finds the secret in no encoding in the table, the files under .stepforge or the CLI output', async () => {
    const items: unknown[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await stack.runtime.db.doc.send(new ScanCommand({ TableName: stack.runtime.db.tableName, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    expect(items.length).toBeGreaterThan(40);
    // The items' string values as they are, and their JSON (which escapes them once more).
    const values: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') values.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        Object.entries(v).forEach(([k, x]) => {
          values.push(k);
          walk(x);
        });
    };
    walk(items);
    const blobs = items.filter((i) => String((i as { pk?: string }).pk).startsWith('BLOB#'));
    expect(blobs.length).toBeGreaterThan(0);
    const files = filesUnder(join(project.dir, '.stepforge')).filter((f) => !f.endsWith('secrets.json'));
    expect(files.some((f) => f.includes(`${join('.stepforge', 'engine')}`))).toBe(true);
    const places: Record<string, string> = {
      table: values.join('\n') + JSON.stringify(items),
      files: files.map((f) => readFileSync(f, 'latin1') + readFileSync(f, 'utf8')).join('\n'),
      cli: printed,
    };
    // Each encoding's part that carries the secret (written out here, not taken from the Redactor under test).
    const json = JSON.stringify(SECRET).slice(1, -1);
    const forms = [
      SECRET,
      json,
      json.replace('é', '\\u00e9'),
      JSON.stringify(json).slice(1, -1),
      JSON.stringify(json.replace('é', '\\u00e9')).slice(1, -1),
      encodeURIComponent(SECRET),
      new URLSearchParams({ k: SECRET }).toString().slice(2),
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('base64').replace(/=+$/, ''),
      Buffer.from(`x${SECRET}`).toString('base64url').slice(2, -2),
      Buffer.from(`user:${SECRET}`).toString('base64').slice(8, -3),
      hookUrl,
      new URL(hookUrl).href,
      `127.0.0.1:${server.port}/hooks/T0K3N-path`,
      '/hooks/T0K3N-path',
      'T0K3N-path?sig=a%20b',
    ];
    const hits: string[] = [];
    for (const [place, text] of Object.entries(places)) {
      for (const form of forms) {
        const found = text.includes(form);
        tally.record(!found);
        if (found) hits.push(`${place}: ${form}`);
      }
    }
    expect(hits).toEqual([]);
  });

  it("stores no path of this installation in a step error or its trace, only the user's own frames", async () => {
    const text =
      JSON.stringify(
        await (async () => {
          const page = await stack.runtime.db.doc.send(new ScanCommand({ TableName: stack.runtime.db.tableName }));
          return page.Items;
        })(),
      ) +
      filesUnder(join(project.dir, '.stepforge', 'engine'))
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n') +
      printed;
    for (const installPath of [
      join(REPO, 'packages', 'runtime', 'src'),
      join(REPO, 'node_modules'),
      'node:internal',
      join(REPO, 'packages'),
    ]) {
      const found = text.includes(installPath);
      tally.record(!found);
      expect([installPath, found]).toEqual([installPath, false]);
    }
    // The user's frame is kept, relative to the functions folder.
    expect(text).toMatch(/at explode \(explode\.mjs:\d+:\d+\)/);
  });

  it.runIf(hasPython)('has the Python Lambda redact the same encodings, and the parts of a secret URL', () => {
    const script = [
      'import base64, json, sys, urllib.parse',
      'import stepforge_lambda as L',
      'secret, url = sys.argv[1], sys.argv[2]',
      'r = L.Redactor(); r.add(secret); r.add(url)',
      'u = urllib.parse.urlsplit(url)',
      'texts = [secret, json.dumps({"k": secret}), json.dumps(json.dumps({"k": secret})), json.dumps({"k": secret}, ensure_ascii=False),',
      '         urllib.parse.quote(secret, safe=""), urllib.parse.urlencode({"k": secret}), base64.b64encode(secret.encode()).decode(),',
      '         "Basic " + base64.b64encode(("user:" + secret).encode()).decode(), base64.urlsafe_b64encode(("x" + secret).encode()).decode(),',
      '         "POST %s://%s%s" % (u.scheme, u.netloc, u.path), u.path + "?" + u.query]',
      'print(json.dumps([r.text(t) for t in texts]))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', script, SECRET, 'https://hooks.example.com/services/T0K3N-path?sig=abc'], {
      cwd: join(REPO, 'packages', 'runtime', 'python'),
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as string[];
    const leaked = out.filter((t) => /w.{0,4}rd|T0K3N|sig=abc|cEBzcyAid1xy|dXNlcjpwQHNz/.test(t));
    tally.record(leaked.length === 0);
    expect(leaked).toEqual([]);
    expect(out[7]).toMatch(/^Basic .*\*\*\*/);
  });
});
