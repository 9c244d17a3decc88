import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { BUILTIN_CONNECTORS } from '../../packages/runtime/src/connectors/builtinConnectors.js';
import { outboundRequest } from '../../packages/runtime/src/net/outboundRequest.js';
import { tempProject } from '../e2e/support/testIo.js';

/** A loopback HTTP server of the test, and how many bytes it managed to send. */
interface Target {
  readonly server: Server;
  readonly url: string;
  readonly host: string;
  sent: number;
  closed: Promise<void>;
}

async function target(handler: (t: Target, res: import('node:http').ServerResponse, path: string) => void): Promise<Target> {
  let onClosed: () => void = () => undefined;
  const t = {
    sent: 0,
    closed: new Promise<void>((r) => {
      onClosed = r;
    }),
  } as Target;
  const server = createServer((req, res) => {
    res.on('close', () => onClosed());
    handler(t, res, req.url ?? '/');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(t, { server, url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` });
}

/** The error a call failed with, as name and message (or `ok`). */
async function outcome(p: Promise<unknown>): Promise<{ name: string; message: string; code?: unknown; reason?: unknown }> {
  try {
    await p;
    return { name: 'ok', message: '' };
  } catch (e) {
    const err = e as { name: string; message: string; details?: { code?: unknown; reason?: unknown } };
    return { name: err.name, message: err.message, code: err.details?.code, reason: err.details?.reason };
  }
}

/**
 * `http_fetch` and the HTTP connector, attacked the ways a workflow (or a model steering an agent)
 * can: cloud metadata services in every spelling, private hosts, a redirect out, a name whose DNS
 * answer is loopback, and an answer that never ends. Each must be refused by name; the listed
 * loopback host must still answer.
 */
describe('Security: outbound HTTP of http_fetch and the connectors', () => {
  const project = tempProject('sf-sec-net-');
  let stack: EmbeddedStack;
  let good: Target;
  let huge: Target;
  let redirector: Target;
  let unlisted: Target;
  let attacks = 0;
  let refused = 0;
  const attack = async (what: string, call: Promise<unknown>, expected: { name: string; reason?: string }) => {
    attacks++;
    const got = await outcome(call);
    if (got.name === expected.name && (expected.reason === undefined || got.reason === expected.reason)) refused++;
    return { what, ...got };
  };
  const ctx = () =>
    ({
      runtime: stack.runtime,
      runId: 'run-net',
      stepId: 'net',
      idempotencyKey: 'k',
      guard: { dispatch: async () => undefined, claim: async () => undefined },
    }) as never;
  const fetchTool = (url: string) => stack.runtime.tools.get('http_fetch')!.run({ url }, ctx());
  const webhook = (url: string) => BUILTIN_CONNECTORS.http!.actions.request!.run({ url, body: { paid: 1 } }, ctx());

  beforeAll(async () => {
    good = await target((_t, res) => res.end('hello'));
    // An answer that never ends: 64 KiB chunks for as long as the connection lasts.
    huge = await target((t, res) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = () => {
        while (!res.destroyed) {
          t.sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    redirector = await target((_t, res, path) => {
      res.writeHead(302, {
        location: path === '/ipv6' ? 'http://[fd00:ec2::254]/latest/' : 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      });
      res.end();
    });
    unlisted = await target((_t, res) => res.end('private'));
    // The project lists its loopback test hosts, and (to show they are refused even then) metadata ones.
    writeFileSync(
      join(project.dir, 'stepforge.config.json'),
      JSON.stringify({
        http: {
          allowHosts: [
            good.host,
            huge.host,
            redirector.host,
            '169.254.169.254',
            '[fd00:ec2::254]',
            'metadata.google.internal',
            '[::ffff:a9fe:a9fe]',
            'rebind.example',
            '0.0.0.0',
          ],
        },
      }),
    );
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  });
  afterAll(async () => {
    await stack.close();
    for (const t of [good, huge, redirector, unlisted]) {
      t.server.closeAllConnections();
      t.server.close();
    }
    project.remove();
    console.log(
      `security: outbound HTTP — ${refused}/${attacks} attacks refused (endless answer: the server got ${(huge.sent / 1048576).toFixed(1)} MiB out before the read stopped at the 256 KiB cap)`,
    );
  });

  it('refuses cloud metadata addresses in every spelling, even when listed, with PolicyDenied before connecting', async () => {
    const results = [
      await attack('AWS metadata', fetchTool('http://169.254.169.254/latest/meta-data/'), { name: 'PolicyDenied', reason: 'metadata' }),
      await attack('AWS metadata as a decimal number', fetchTool('http://2852039166/latest/'), {
        name: 'PolicyDenied',
        reason: 'metadata',
      }),
      await attack('AWS metadata in hex', fetchTool('http://0xA9FEA9FE/latest/'), { name: 'PolicyDenied', reason: 'metadata' }),
      await attack('AWS metadata over IPv6', fetchTool('http://[fd00:ec2::254]/latest/'), { name: 'PolicyDenied', reason: 'metadata' }),
      await attack('AWS metadata as IPv4-mapped IPv6', fetchTool('http://[::ffff:169.254.169.254]/latest/'), {
        name: 'PolicyDenied',
        reason: 'metadata',
      }),
      await attack('GCP metadata by name', fetchTool('http://metadata.google.internal/computeMetadata/v1/'), {
        name: 'PolicyDenied',
        reason: 'metadata',
      }),
      await attack('connector to AWS metadata', webhook('http://169.254.169.254/latest/meta-data/'), {
        name: 'PolicyDenied',
        reason: 'metadata',
      }),
      await attack('connector to 0.0.0.0', webhook('http://0.0.0.0:80/'), { name: 'PolicyDenied', reason: 'reserved' }),
    ];
    expect(results.filter((r) => r.name !== 'PolicyDenied')).toEqual([]);
    expect(results[0]!.message).toBe('http_fetch refuses 169.254.169.254: 169.254.169.254 is a cloud metadata service address');
    expect(results[5]!.message).toBe('http_fetch never reaches metadata.google.internal: it is a cloud metadata service');
    expect(results[6]!.message).toBe('http.request refuses 169.254.169.254: 169.254.169.254 is a cloud metadata service address');
  });

  it('refuses a redirect from a listed host to a metadata address', async () => {
    const results = [
      await attack('redirect to AWS metadata', fetchTool(`${redirector.url}/`), { name: 'PolicyDenied', reason: 'metadata' }),
      await attack('redirect to IPv6 metadata', fetchTool(`${redirector.url}/ipv6`), { name: 'PolicyDenied', reason: 'metadata' }),
    ];
    expect(results.map((r) => r.name)).toEqual(['PolicyDenied', 'PolicyDenied']);
  });

  it('refuses private and loopback hosts that are not listed, and a listed name whose DNS answer is loopback (rebinding)', async () => {
    const results = [
      await attack('unlisted loopback host (http_fetch)', fetchTool(`${unlisted.url}/`), { name: 'PolicyDenied', reason: 'not_allowed' }),
      await attack('unlisted loopback host (connector)', webhook(`${unlisted.url}/`), { name: 'PolicyDenied', reason: 'not_allowed' }),
    ];
    // An attacker's DNS: the listed name answers with the loopback address of a local service.
    const rebinding = {
      allowHosts: ['rebind.example'],
      what: 'http_fetch',
      lookup: (_h: string, _o: { all: true }, cb: (e: null, a: { address: string; family: number }[]) => void) =>
        cb(null, [{ address: '127.0.0.1', family: 4 }]),
    };
    const rebound = await attack(
      'DNS rebinding to loopback',
      outboundRequest(new URL(`http://rebind.example:${new URL(unlisted.url).port}/`), { maxBodyBytes: 1000 }, rebinding),
      { name: 'PolicyDenied', reason: 'private' },
    );
    const toMetadata = {
      ...rebinding,
      lookup: (_h: string, _o: { all: true }, cb: (e: null, a: { address: string; family: number }[]) => void) =>
        cb(null, [
          { address: '93.184.215.14', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ]),
    };
    const mixed = await attack(
      'DNS answer with a metadata address among public ones',
      outboundRequest(new URL('http://rebind.example/'), { maxBodyBytes: 1000 }, toMetadata),
      { name: 'PolicyDenied', reason: 'metadata' },
    );
    expect([...results, rebound, mixed].map((r) => r.name)).toEqual(['PolicyDenied', 'PolicyDenied', 'PolicyDenied', 'PolicyDenied']);
    expect(results[1]!.message).toBe(`host ${unlisted.host} is not on the http.request allow-list`);
    expect(rebound.message).toBe(
      `http_fetch refuses rebind.example:${new URL(unlisted.url).port}: rebind.example resolves to 127.0.0.1, which is a private or loopback address (allow it by listing that address in http.allowHosts, or set http.allowPrivateNetworks, in stepforge.config.json)`,
    );
    // With private networks allowed, the same name reaches the service at the address that was checked.
    const allowed = await outboundRequest(
      new URL(`http://rebind.example:${new URL(unlisted.url).port}/`),
      { maxBodyBytes: 1000 },
      { ...rebinding, allowPrivateNetworks: true },
    );
    expect([allowed.status, allowed.body.toString()]).toEqual([200, 'private']);
  });

  it('stops reading an answer that never ends at the cap, with OutputTooLarge, holding no more than the cap', async () => {
    const before = process.memoryUsage().rss;
    const r = await attack('endless answer', fetchTool(`${huge.url}/`), { name: 'OutputTooLarge' });
    await huge.closed;
    expect([r.name, r.code, r.message]).toEqual([
      'OutputTooLarge',
      'response_too_large',
      `http_fetch: the answer of ${huge.host} is over the 262144-byte cap; the rest was not read`,
    ]);
    // The server could write only what the socket buffers took before the connection closed.
    expect(huge.sent).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('answers from a listed loopback host, through the tool and the connector', async () => {
    expect(await fetchTool(`${good.url}/page`)).toMatchObject({ status: 200, body: 'hello' });
    expect(await webhook(`${good.url}/hook`)).toMatchObject({ status: 200, body: 'hello' });
    expect(refused).toBe(attacks);
  });
});
