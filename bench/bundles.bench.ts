// `npm run bench -- bundles`: the size of each handler's Lambda bundle, built with the settings the
// CDK app deploys with (infra/lib/bundling/handlerBundling.ts), beside the sizes measured before
// per-handler bundles (the AWS SDK left to the runtime, source maps always shipped, the whole of zod
// and the MCP SDK in every handler). Target: each handler's asset at most 40 % of its size then.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ALL_HANDLERS } from '@stepforge/contract';
import { HANDLER_BUNDLE, SOURCE_MAP } from '../infra/lib/bundling/handlerBundling.js';
import { handlerEntry } from '../infra/lib/constructs/StepHandlers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** KiB of code and of source map per handler at commit 04ef262 (esbuild 0.28.2, `@aws-sdk/*` external, maps shipped). */
const BEFORE: Record<string, { code: number; map: number }> = {
  model: { code: 795, map: 950 },
  tool: { code: 796, map: 955 },
  connector: { code: 787, map: 938 },
  function: { code: 791, map: 944 },
  mcpTool: { code: 783, map: 933 },
  trigger: { code: 779, map: 928 },
  approvals: { code: 791, map: 944 },
  api: { code: 845, map: 1024 },
};

const kib = (bytes: number) => Math.round(bytes / 1024);

export default async function bundles(): Promise<void> {
  const out = mkdtempSync(join(tmpdir(), 'stepforge-bundles-'));
  try {
    console.log(
      'handler    | code KiB | map KiB (optional) | asset now | asset before (code + map) | now / before | target ≤ 40 % | biggest inputs',
    );
    console.log(
      '---------- | -------- | ------------------ | --------- | ------------------------- | ------------ | ------------- | --------------',
    );
    for (const h of ALL_HANDLERS) {
      // The entry StepHandlers deploys (the api handler's too: packages/runtime/src/handlers/api.ts).
      const entry = handlerEntry(join(ROOT, 'packages/runtime/src/handlers'), h)!;
      const outfile = join(out, h, 'index.mjs');
      const r = await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        logLevel: 'error',
        metafile: true,
        format: HANDLER_BUNDLE.format,
        target: HANDLER_BUNDLE.target,
        minify: HANDLER_BUNDLE.minify,
        mainFields: HANDLER_BUNDLE.mainFields,
        banner: { js: HANDLER_BUNDLE.banner },
        external: HANDLER_BUNDLE.external,
        define: HANDLER_BUNDLE.define,
        alias: HANDLER_BUNDLE.alias,
        tsconfig: join(ROOT, 'tsconfig.json'),
        sourcemap: SOURCE_MAP.sourceMap,
        sourcesContent: SOURCE_MAP.sourcesContent,
      });
      const code = statSync(outfile).size;
      const map = statSync(`${outfile}.map`).size;
      const before = BEFORE[h]!;
      const ratio = kib(code) / (before.code + before.map);
      const byPackage = new Map<string, number>();
      for (const [file, input] of Object.entries(Object.values(r.metafile.outputs).find((o) => o.entryPoint)!.inputs)) {
        const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? 'stepforge';
        byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + input.bytesInOutput);
      }
      const top = [...byPackage]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([p, b]) => `${p} ${kib(b)}`)
        .join(', ');
      console.log(
        `${h.padEnd(10)} | ${String(kib(code)).padStart(8)} | ${String(kib(map)).padStart(18)} | ${String(kib(code)).padStart(9)} | ${String(before.code + before.map).padStart(25)} | ${`${Math.round(ratio * 100)} %`.padStart(12)} | ${(ratio <= 0.4 ? 'met' : 'missed').padStart(13)} | ${top}`,
      );
    }
    console.log(
      '\nasset now = the code alone (source maps are off unless deployed with -c sourceMaps=true); code before alone was the figure in BEFORE.',
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
