// What each handler's Lambda bundle holds, built as StepHandlers deploys it (HANDLER_BUNDLE): the
// AWS clients its code sends with and no other, the MCP SDK only where MCP servers are called or
// approved calls are run, and none of the packages (or parts of packages) the bundles replace
// (packages/runtime/src/bundled/; infra/test/bundledStandIns.test.ts runs them in a bundle).
// `npm run bench -- bundles` prints the sizes.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_HANDLERS, type HandlerId } from '@stepforge/contract';
import { buildHandlerBundle } from '../lib/bundling/buildHandlerBundle.js';
import { ROOT } from './synthFixtureStack.js';

/** The AWS SDK clients each handler's code reaches (DynamoDB and Secrets Manager: every handler); api and approvals run approved calls, never announce one on SQS. */
const CLIENTS: Record<HandlerId, string[]> = {
  model: ['bedrock-runtime'],
  tool: ['sfn', 'sqs'],
  connector: ['eventbridge', 'sqs'],
  function: ['sfn'],
  mcpTool: [],
  api: ['sfn'],
  trigger: ['sfn'],
  approvals: ['sfn'],
};

/** The handlers that reach MCP servers: MCP tool steps, agents' MCP tools, and approved calls run by a decision. */
const MCP: HandlerId[] = ['tool', 'mcpTool', 'api', 'approvals'];

/** Replaced in every bundle (see HANDLER_BUNDLE.alias), or the chain that came with what was replaced. */
const NEVER = [
  'ajv',
  'ajv-formats',
  'fast-uri',
  'semver',
  '@aws-sdk/credential-provider-node',
  '@aws-sdk/credential-provider-ini',
  'mnemonist',
  'obliterator',
  'cross-spawn',
  'which',
  'isexe',
  'pkce-challenge',
  'zod-to-json-schema',
];

/** Files of packages the bundles keep, but never these parts of them (what the stand-ins in packages/runtime/src/bundled/ leave out). */
const NEVER_FILES = [
  // X-Ray's sampling and request middleware, its EC2/ECS/Beanstalk plugins, its SDK v2 and promise patchers.
  /aws-xray-sdk-core\/dist\/lib\/(middleware|segments\/plugins)\//,
  /aws-xray-sdk-core\/dist\/lib\/(aws-xray|patchers\/aws_p|patchers\/promise_p)\.js$/,
  // The SDK's event-stream codec and pure-JavaScript hashes.
  /@smithy\/core\/dist-es\/submodules\/event-streams\//,
  /@smithy\/core\/dist-es\/submodules\/checksum\//,
];

const out = mkdtempSync(join(tmpdir(), 'stepforge-handler-bundles-'));
const metafiles = new Map<HandlerId, Metafile>();

beforeAll(async () => {
  for (const h of ALL_HANDLERS) {
    const r = await buildHandlerBundle(ROOT, h, join(out, h, 'index.mjs'));
    expect(r.warnings).toEqual([]);
    metafiles.set(h, r.metafile);
  }
}, 300_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The packages (node_modules/<name>) with code in a bundle (an import that tree-shaking emptied does not count). */
function packagesOf(h: HandlerId): Set<string> {
  const names = new Set<string>();
  const output = Object.values(metafiles.get(h)!.outputs).find((o) => o.entryPoint)!;
  for (const [file, input] of Object.entries(output.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    if (m && input.bytesInOutput > 0) names.add(m[1]!);
  }
  return names;
}

describe('Handler bundles', () => {
  it.each(ALL_HANDLERS)('%s loads as Lambda loads it: the module evaluates and exports the handler', async (h) => {
    // A module that fails while it loads fails every cold start (the bundles with the MCP SDK did,
    // until zod was imported by the SDK's name: see zodAliases in handlerBundling.ts).
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(out, h, 'index.mjs'))}); process.stdout.write(typeof m.handler);`,
      ],
      { env: { PATH: process.env.PATH } },
    );
    expect(stdout).toBe('function');
  });

  it.each(ALL_HANDLERS)('%s carries the AWS clients its code sends with, and no other', (h) => {
    const clients = [...packagesOf(h)].filter((p) => p.startsWith('@aws-sdk/client-')).sort();
    expect(clients).toEqual(['dynamodb', 'secrets-manager', ...CLIENTS[h]].map((c) => `@aws-sdk/client-${c}`).sort());
  });

  it.each(ALL_HANDLERS)('%s carries the MCP SDK only if it reaches MCP servers, with the cfworker validator', (h) => {
    const pkgs = packagesOf(h);
    expect(pkgs.has('@modelcontextprotocol/sdk')).toBe(MCP.includes(h));
    expect(pkgs.has('@cfworker/json-schema')).toBe(MCP.includes(h));
  });

  it.each(ALL_HANDLERS)('%s holds none of the packages the bundles replace', (h) => {
    const pkgs = packagesOf(h);
    expect(NEVER.filter((p) => pkgs.has(p))).toEqual([]);
    const output = Object.values(metafiles.get(h)!.outputs).find((o) => o.entryPoint)!;
    expect(Object.keys(output.inputs).filter((f) => NEVER_FILES.some((r) => r.test(f)))).toEqual([]);
    // The stand-ins are where their packages were imported: X-Ray's entry under Powertools' Tracer.
    const inputs = metafiles.get(h)!.inputs;
    const xrayImporters = Object.keys(inputs).filter((f) => inputs[f]!.imports.some((i) => i.path.endsWith('bundled/xraySdkCore.ts')));
    expect(xrayImporters.sort()).toEqual([
      'node_modules/@aws-lambda-powertools/tracer/lib/esm/Tracer.js',
      'node_modules/@aws-lambda-powertools/tracer/lib/esm/provider/ProviderService.js',
    ]);
  });
});
