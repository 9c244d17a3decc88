// How each handler's Lambda bundle is built: one esbuild bundle per entry file, holding only what
// that entry imports, with the pinned AWS SDK (packages/runtime/package.json) inside rather than the
// runtime's, so what runs on Lambda is the SDK the tests ran with. StepHandlers and
// `npm run bench -- bundles` both use these settings, so the bench measures what deploys.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLED = fileURLToPath(new URL('../../../packages/runtime/src/bundled/', import.meta.url));

/** Resolves a package as the runtime's code does. */
const runtimeRequire = createRequire(new URL('../../../packages/runtime/package.json', import.meta.url));

/** Where the runtime's aws-xray-sdk-core is: the bundles' stand-in for its entry imports its modules from there. */
const XRAY = dirname(runtimeRequire.resolve('aws-xray-sdk-core/package.json'));

/**
 * `zod` imported as `zod/v4`, and each other subpath of zod as its own file. The MCP SDK is loaded
 * with import() (packages/runtime/src/mcp/mcpSdk.ts), so esbuild wraps it, and the zod modules it
 * imports, in lazy initialisers; the runtime and the contract import `zod`, whose entry only
 * re-exports those modules, and esbuild drops that entry's call to their initialiser, so the first
 * schema built at load failed (`… is not a constructor`) in every bundle with the MCP SDK. `zod` and
 * `zod/v4` are one API (both re-export zod/v4/classic); importing it by the SDK's name makes every
 * importer call the initialiser. The other subpaths are listed because an alias also rewrites
 * `zod/<subpath>` (to `<target>/<subpath>`).
 */
function zodAliases(): Record<string, string> {
  const root = dirname(runtimeRequire.resolve('zod/package.json'));
  const exports = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { import?: string }> }
  ).exports;
  const file = (sub: string) => {
    const target = exports[sub];
    return join(root, typeof target === 'string' ? target : target!.import!);
  };
  const aliases: Record<string, string> = { zod: file('./v4') };
  for (const sub of Object.keys(exports)) if (sub !== '.' && !sub.includes('*')) aliases[`zod${sub.slice(1)}`] = file(sub);
  return aliases;
}

/** The X-Ray SDK's version, which its API records on segments (its entry reads its whole package.json for it). */
const XRAY_VERSION = (JSON.parse(readFileSync(join(XRAY, 'package.json'), 'utf8')) as { version: string }).version;

/** The secrets backend the stack deploys its handlers with (their STEPFORGE_SECRETS_BACKEND). */
export const DEPLOYED_SECRETS_BACKEND = 'secretsmanager';

/** esbuild settings shared by every handler bundle (the CLI flags NodejsFunction passes, as options). */
export const HANDLER_BUNDLE = {
  format: 'esm',
  target: 'node22',
  minify: true,
  mainFields: ['module', 'main'] as string[],
  // ESM bundles of CommonJS dependencies still call require().
  banner: "import{createRequire as __sfCreateRequire}from'module';const require=__sfCreateRequire(import.meta.url);",
  // Nothing is left out: the AWS SDK is bundled, pinned, tree-shaken to the commands each handler sends.
  external: [] as string[],
  // The stack deploys one secrets backend (STEPFORGE_SECRETS_BACKEND): the runtime's SecretResolver
  // reads this at bundle time, so the other backend's store and SDK client (SSM's ~170 KiB) stay out.
  // The X-Ray SDK's version, for the stand-in of its entry (which would otherwise bundle its package.json).
  define: {
    'process.env.STEPFORGE_BUNDLED_SECRETS_BACKEND': JSON.stringify(DEPLOYED_SECRETS_BACKEND),
    'process.env.STEPFORGE_BUNDLED_XRAY_SDK_VERSION': JSON.stringify(XRAY_VERSION),
  } as Record<string, string>,
  // Packages, or parts of packages, a handler bundle replaces (packages/runtime/src/bundled/ says
  // why each; infra/test/handlerBundles.test.ts checks they are gone).
  alias: {
    // The SDK's default credential chain, narrowed to what Lambda provides (see the module).
    '@aws-sdk/credential-provider-node': `${BUNDLED}lambdaCredentialProvider.ts`,
    // The clients' SHA-256 and MD5 over node:crypto, without the pure-JavaScript fallbacks.
    '@smithy/core/checksum': `${BUNDLED}nodeChecksums.ts`,
    // No handler sends an operation with an event stream.
    '@smithy/core/event-streams': `${BUNDLED}noEventStreams.ts`,
    // The MCP SDK's stdio transport spawns its servers through cross-spawn, which is spawn off Windows.
    'cross-spawn': `${BUNDLED}crossSpawn.ts`,
    // The MCP SDK's client modules import these for code its clients run only with an OAuth
    // provider (PKCE) or as a server (zod v3 tool schemas); the runtime's clients do neither.
    'pkce-challenge': `${BUNDLED}mcpUnreachable.ts`,
    'zod-to-json-schema': `${BUNDLED}mcpUnreachable.ts`,
    // zod by the name the MCP SDK imports it (see zodAliases).
    ...zodAliases(),
    // DynamoDB's endpoint cache calls five methods of mnemonist's LRU cache.
    'mnemonist/lru-cache': `${BUNDLED}lruCache.ts`,
    // Powertools' Tracer takes X-Ray's API from its entry, which requires the SDK's sampling,
    // middleware and plugins too; the bundles give it the same API without what never runs in a Lambda.
    'aws-xray-sdk-core': `${BUNDLED}xraySdkCore.ts`,
    // ...whose own imports of the SDK's modules stay the SDK's (a longer alias wins).
    'aws-xray-sdk-core/dist': `${XRAY}/dist`,
    // The MCP SDK's client imports its ajv-based default validator even when given another; the
    // runtime gives it one over @cfworker/json-schema, and these put the same library in ajv's place.
    ajv: `${BUNDLED}CfworkerAjv.ts`,
    'ajv-formats': `${BUNDLED}addCfworkerFormats.ts`,
  } as Record<string, string>,
} as const;

/** Source maps, when asked for: file names and lines, not the sources (3× smaller). */
export const SOURCE_MAP = { sourceMap: true, sourcesContent: false } as const;
