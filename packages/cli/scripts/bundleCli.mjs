// Bundles the built CLI (dist/main.js and everything it imports from the workspace and npm) into
// CommonJS files, dist/bundle/stepforge.cjs (every command) and one smaller file per command that runs
// no workflow (stepforge-validate.cjs, ..., stepforge-help.cjs; see BUNDLES), which bin/stepforge.js
// loads with V8's code cache (see bin/loadCli.js). Run by `npm run build` after tsc.
//
// Why: a command spent most of its time loading modules: finding, reading and compiling some 1,500
// files (1.75 s for `stepforge run` of the quickstart, 0.67 s for `--help`, on the 2-core build
// machine). One file with its compiled code cached starts in a fraction of that.
//
// CommonJS, because V8's code cache (vm.Script cachedData) serves scripts, not ES modules, on Node
// 20. `import.meta.url` (four uses: module resolution and a file next to the module) becomes the
// bundle's own URL, and the file it names is copied beside the bundle; so is the Python worker's
// folder (packages/runtime/python), which the runtime's userfn/pythonSourceDir then names as `./python/` beside
// the bundle. dynalite stays outside: the emulator worker requires it by its resolved path, in another thread.
//
// No `import()` is left in the bundle: Node 20 loses the callback an `import()` needs in code
// loaded from the code cache. Imports of bundled modules and Node's own become requires
// (`dynamic-import: false`); the one import of files outside the code (user functions, `asl run
// --handlers`), the runtime's userfn/importFile, is replaced by a module that calls
// `__stepforge_import`, which the launcher passes in with the module wrapper's arguments.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const { BUNDLE_WRAPPER } = createRequire(import.meta.url)('../bin/bundleWrapper.js');
const outdir = join(cli, 'dist', 'bundle');
const repo = join(cli, '..', '..');
mkdirSync(outdir, { recursive: true });

/**
 * The commands each bundle holds. `stepforge.cjs` holds every command (the stack's commands share
 * the embedded stack, so one bundle serves them all); the commands that run no workflow each get a
 * bundle of their own, holding that command and what it imports, and `help` holds none (it prints
 * the command table, `--version` and the unknown-command error). bin/loadCli.js picks the bundle
 * by the command's name, from the same table (bundles.json, written below).
 *
 * Why: a command pays for reading and compiling its bundle before it runs a line. `--help` in
 * the one 7 MB bundle read and ran the AWS SDK, the engine and the emulators' clients it never
 * uses; `validate` needs the compiler only.
 */
const ALL = ['asl', 'compile', 'graph', 'validate', 'new', 'run', 'runs', 'approvals', 'serve', 'store'];
const BUNDLES = [
  { name: 'stepforge', commands: ALL },
  { name: 'stepforge-help', commands: [] },
  { name: 'stepforge-validate', commands: ['validate'] },
  { name: 'stepforge-graph', commands: ['graph'] },
  { name: 'stepforge-compile', commands: ['compile'] },
  { name: 'stepforge-new', commands: ['new'] },
  { name: 'stepforge-run', commands: ['run'], stack: true },
];

/**
 * Leaves out of a bundle the command modules it does not hold: commands/registry.js imports each
 * command lazily, and an import of one left out becomes a module that throws when loaded, naming
 * the command (only a launcher that picked the wrong bundle could reach it).
 */
function onlyCommands(commands) {
  return {
    name: 'only-commands',
    setup(b) {
      b.onResolve({ filter: /^\.\/[a-z]+\.js$/ }, (args) => {
        if (!/[\\/]cli[\\/]dist[\\/]commands[\\/]registry\.js$/.test(args.importer)) return undefined;
        const name = args.path.slice(2, -3);
        if (!ALL.includes(name)) throw new Error(`bundleCli: commands/registry.js imports ./${name}.js, which is not in the command list here`);
        return commands.includes(name) ? undefined : { path: name, namespace: 'absent-command' };
      });
      b.onLoad({ filter: /.*/, namespace: 'absent-command' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`stepforge: the command '${args.path}' is not in this bundle; bin/loadCli.js picks the bundle by the command's name (reinstall, or run with STEPFORGE_NO_BUNDLE=1)`)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * Packages that only some workflows need, each loaded through an `import()` when first needed:
 * fauxqs (the SQS emulator, with fastify and its schema compilers: a workflow that asks for no
 * approval and has no trigger never sends an SQS request) and the MCP SDK (a workflow that calls no
 * MCP server). Each goes into a file of its own beside the command bundles (`file`), which the
 * bundles require when the import runs, instead of into every bundle that can reach it.
 *
 * Why: a command reads its whole bundle before it runs a line, and these are 1.6 MB of the 8 MB
 * that `run` read on every start. Loaded when needed, they cost about what they did inside the
 * bundle, once; they are plain requires, without the command's code cache.
 */
const SIDE_BUNDLES = [
  { file: 'stepforge-sqs.cjs', specifiers: ['fauxqs'] },
  // undici's connection pool: the loopback HTTP transport, loaded on a first request over HTTP
  // (LoopbackHttpHandler), which a `run` that owns its stack may never send.
  // Powertools' Tracer (with the X-Ray SDK) and Metrics: the Lambda telemetry, which the runtime
  // loads only inside Lambda (never in the CLI's processes).
  { file: 'stepforge-telemetry.cjs', specifiers: ['@aws-lambda-powertools/tracer', '@aws-lambda-powertools/metrics'] },
  // The secret stores on AWS (SSM Parameter Store, Secrets Manager) with their SDK clients, loaded
  // when a workflow's secret is first read from one. These clients hold a copy of the SDK's core of
  // their own (which a bundle beside the command's cannot share with it): loaded only then.
  {
    file: 'stepforge-secrets.cjs',
    specifiers: ['@aws-lambda-powertools/parameters/ssm', '@aws-sdk/client-ssm', '@aws-lambda-powertools/parameters/secrets', '@aws-sdk/client-secrets-manager'],
  },
  // A CommonJS module (`commonjs`): its export is its `module.exports` as it is, which an import of
  // it takes as the default, as from the module itself.
  { file: 'stepforge-undici.cjs', specifiers: ['undici/lib/dispatcher/pool.js'], commonjs: true },
  {
    file: 'stepforge-mcp.cjs',
    specifiers: [
      '@modelcontextprotocol/sdk/client/index.js',
      '@modelcontextprotocol/sdk/client/stdio.js',
      '@modelcontextprotocol/sdk/client/streamableHttp.js',
      '@modelcontextprotocol/sdk/validation/cfworker',
    ],
  },
];

/**
 * esbuild's interop helpers, as it writes them (whitespace-minified): `__toESM` (an ES module
 * importing a CommonJS one) and `__toCommonJS` (an ES module required, or imported with import(),
 * which the bundle turns into a require) copy every export of the module onto a new object, as a
 * getter each, at every importing module. `memoizedInterop` makes them hand out one copy per
 * module, as Node hands out one module object: the AWS SDK's client modules were copied once per
 * module importing them (client-dynamodb's 526 exports eleven times), some 7,700 getters for the
 * 1,140 exports of 23 modules in `run`, 20-30 ms and ~800 page faults of its start-up on the
 * 2-core build machine. A CommonJS module whose exports have changed in number since its copy
 * (one still loading when first imported, in a require cycle) is copied again.
 */
const INTEROP_HELPERS = [
  {
    name: '__toESM',
    as: '__toESM=(mod,isNodeMode,target)=>(target=mod!=null?__create(__getProtoOf(mod)):{},__copyProps(isNodeMode||!mod||!mod.__esModule?__defProp(target,"default",{value:mod,enumerable:!0}):target,mod))',
    memoized:
      '__toESM=(mod,isNodeMode)=>__stepforge_copy(isNodeMode?1:0,mod,(target=mod!=null?__create(__getProtoOf(mod)):{})=>__copyProps(isNodeMode||!mod||!mod.__esModule?__defProp(target,"default",{value:mod,enumerable:!0}):target,mod))',
  },
  {
    name: '__toCommonJS',
    as: '__toCommonJS=mod=>__copyProps(__defProp({},"__esModule",{value:!0}),mod)',
    memoized: '__toCommonJS=mod=>__stepforge_copy(2,mod,()=>__copyProps(__defProp({},"__esModule",{value:!0}),mod))',
  },
];

/**
 * The memo the helpers share (in every bundle's banner): one copy per module and kind (`__toESM`
 * in node mode or not, `__toCommonJS`), made again when the module's own property count changed.
 */
const INTEROP_MEMO = [
  'const __stepforge_copies = [new WeakMap(), new WeakMap(), new WeakMap()];',
  'const __stepforge_copy = (kind, mod, copy) => {',
  "  if (mod == null || (typeof mod !== 'object' && typeof mod !== 'function')) return copy();",
  '  const count = Object.getOwnPropertyNames(mod).length, seen = __stepforge_copies[kind].get(mod);',
  '  if (seen !== undefined && seen.count === count) return seen.value;',
  '  const value = copy();',
  '  __stepforge_copies[kind].set(mod, { value, count });',
  '  return value;',
  '};',
].join('\n');

/** A bundle's text with the memoized interop helpers (see INTEROP_HELPERS); a bundle with other helpers fails the build. */
function memoizedInterop(text, path) {
  for (const helper of INTEROP_HELPERS) {
    const at = text.indexOf(helper.as);
    if (at < 0) {
      if (text.includes(`${helper.name}=`))
        throw new Error(`bundleCli: ${path} defines ${helper.name} otherwise than memoizedInterop expects (an esbuild upgrade?): update INTEROP_HELPERS`);
      continue;
    }
    if (text.indexOf(helper.as, at + 1) >= 0) throw new Error(`bundleCli: ${path} defines ${helper.name} twice`);
    text = `${text.slice(0, at)}${helper.memoized}${text.slice(at + helper.as.length)}`;
  }
  return text;
}

/** What every bundle is built with: CommonJS for Node 20, ASCII only, `import.meta.url` as the bundle's own URL. */
const COMMON = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // esbuild runs its own native binary, found from its package: it cannot be inside a bundle.
  external: ['dynalite', 'esbuild'],
  define: { 'import.meta.url': '__stepforge_bundle_url' },
  // "use strict" first: esbuild marks the bundle strict (its entry is an ES module), and a directive
  // only counts before any statement, so the banner's own line must not come ahead of it.
  banner: { js: `'use strict';\nconst __stepforge_bundle_url = require('node:url').pathToFileURL(__filename).href;\n${INTEROP_MEMO}` },
  supported: { 'dynamic-import': false },
  // Whitespace and syntax only, names kept (no minifyIdentifiers): every command reads its whole
  // bundle before it runs a line, and `run`'s is 3.8 MB this way instead of 5.6 MB. A stack trace
  // from the bundle still names its functions; STEPFORGE_NO_BUNDLE=1 gives the source files' lines.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * Makes each import of a SIDE_BUNDLES specifier a require of its side bundle, taking the export
 * that holds that specifier's module (`m0`, `m1`, … in the order listed).
 */
function sideBundles() {
  const index = new Map(SIDE_BUNDLES.flatMap((side) => side.specifiers.map((spec, i) => [spec, { file: side.file, i }])));
  return {
    name: 'side-bundles',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.namespace === 'side-bundle') return undefined;
        if (index.has(args.path)) return { path: args.path, namespace: 'side-bundle' };
        // Another module of a side bundle's package would put a second copy of it in the command bundle.
        const side = SIDE_BUNDLES.find((x) => x.specifiers.some((spec) => args.path.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/') === spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/')));
        if (side) throw new Error(`bundleCli: ${args.importer} imports ${args.path}, which is not in SIDE_BUNDLES: add it to ${side.file}'s specifiers`);
        return undefined;
      });
      b.onResolve({ filter: /^\.\/stepforge-[a-z]+\.cjs$/, namespace: 'side-bundle' }, (args) => ({ path: args.path, external: true }));
      b.onLoad({ filter: /.*/, namespace: 'side-bundle' }, (args) => {
        const { file, i } = index.get(args.path);
        return { contents: `module.exports = require('./${file}').m${i};`, loader: 'js' };
      });
    },
  };
}

/**
 * zod's message locales, English alone: zod's index re-exports every locale (`z.locales`, some 50
 * languages, 394 KB of the 1.9 MB `validate` bundle and of `run`'s), while it speaks English unless
 * told otherwise (`z.config(z.locales.xx())`) and nothing here tells it otherwise. Every command reads
 * its whole bundle before it runs a line, so they were read on each start for nothing.
 * `z.locales.en` stays; another locale is undefined (a call to one fails at once, naming it).
 */
function zodEnglishOnly() {
  let replaced = false;
  return {
    name: 'zod-english-only',
    setup(b) {
      b.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => {
        replaced = true;
        return { contents: 'export { default as en } from "./en.js";\n', loader: 'js' };
      });
      b.onEnd((r) => {
        if (r.errors.length === 0 && !replaced && r.metafile && Object.keys(r.metafile.inputs).some((f) => /node_modules[\\/]zod[\\/]/.test(f)))
          throw new Error("bundleCli: zod is in the bundle but its locales' index was not replaced; see zodEnglishOnly");
      });
    },
  };
}

/**
 * node:http2 loaded when first used in the AWS SDK's HTTP handler module: the module requires it
 * as it loads (and reads its `constants` there), for its HTTP/2 handler, which nothing here uses
 * (Bedrock's client, the one that would, is given the HTTP/1.1 handler on loopback; on AWS it
 * loads http2 when it first connects). Loading node:http2 is about 10 ms of every command that
 * loads an SDK client, `run` among them, on the 2-core build machine.
 *
 * The module uses two members of it: `connect`, called through the replacement, and two header
 * names from `constants` (`:path` and `:method`, fixed by HTTP/2), checked here against Node's.
 * Another use of either (a new release of the module) fails the build, naming this.
 */
function lazyHttp2InSdkHandler() {
  const http2Line = 'const http2 = require("node:http2");';
  const constantsLine = 'const { constants } = http2;';
  let patched = false;
  return {
    name: 'lazy-http2-in-sdk-handler',
    setup(b) {
      b.onLoad({ filter: /[\\/]@smithy[\\/]node-http-handler[\\/]dist-cjs[\\/]index\.js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const fail = (why) => {
          throw new Error(`bundleCli: ${args.path}: ${why}; see lazyHttp2InSdkHandler`);
        };
        if (text.split(http2Line).length !== 2 || text.split(constantsLine).length !== 2) fail('the lines that load node:http2 are not there once each');
        const http2Uses = new Set(text.match(/\bhttp2\.[A-Za-z_$][\w$]*/g));
        const constantUses = new Set(text.match(/\bconstants\.[A-Za-z_$][\w$]*/g));
        if ([...http2Uses].join() !== 'http2.connect') fail(`it uses ${[...http2Uses].join(', ')} of node:http2`);
        const headers = { HTTP2_HEADER_PATH: ':path', HTTP2_HEADER_METHOD: ':method' };
        for (const use of constantUses) {
          const name = use.slice('constants.'.length);
          if (!Object.hasOwn(headers, name) || http2Constants()[name] !== headers[name]) fail(`it uses ${use} of node:http2's constants`);
        }
        patched = true;
        return {
          contents: text
            .replace(http2Line, 'let http2Loaded;\nconst http2 = { connect: (...args) => (http2Loaded ??= require("node:http2")).connect(...args) };')
            .replace(constantsLine, `const constants = ${JSON.stringify(headers)};`),
          loader: 'js',
        };
      });
      b.onEnd((r) => {
        if (r.errors.length === 0 && !patched && r.metafile && Object.keys(r.metafile.inputs).some((f) => /@smithy[\\/]node-http-handler[\\/]/.test(f)))
          throw new Error("bundleCli: @smithy/node-http-handler is in the bundle but was not patched; see lazyHttp2InSdkHandler");
      });
    },
  };
}

/** Node's HTTP/2 constants, read by the build (never by a bundle). */
function http2Constants() {
  return createRequire(import.meta.url)('node:http2').constants;
}

/** ASCII only: see the command bundles below. */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Rewrites a bundle file once, through each of `steps` (text in, text out; asciiOnly first, so that the text written as Latin-1 is its bytes). */
function finishBundle(path, ...steps) {
  writeFileSync(path, steps.reduce((text, step) => step(text, path), readFileSync(path, 'utf8')), 'latin1');
}

/**
 * The module wrapper bin/loadCli.js compiles a command bundle in, written into the file itself
 * (bin/bundleWrapper.js names it; the launcher checks the file starts with it).
 *
 * Why: the launcher compiled `wrapper + text + '\n})'`, and V8 flattens that into a third copy of
 * the text before it compiles (read bytes, the string, the flat string: 3.8 MB each for `run`),
 * about a thousand page faults of start-up on the 2-core build machine. Read as it is, the file
 * is the script.
 */
function wrapForLauncher(text) {
  return `${BUNDLE_WRAPPER.head}${text}${BUNDLE_WRAPPER.tail}`;
}

for (const side of SIDE_BUNDLES) {
  await build({
    ...COMMON,
    stdin: {
      contents: side.specifiers
        .map((spec, i) => (side.commonjs ? `export { default as m${i} } from ${JSON.stringify(spec)};` : `export * as m${i} from ${JSON.stringify(spec)};`))
        .join('\n'),
      resolveDir: cli,
      loader: 'js',
    },
    outfile: join(outdir, side.file),
  });
  finishBundle(join(outdir, side.file), asciiOnly, memoizedInterop);
}

/**
 * dynalite, its store modules (level, classic-level's JavaScript, memory-level) and its other
 * dependencies as one file, dist/bundle/dynalite.cjs, which the dynalite worker beside it loads
 * instead of requiring dynalite (scripts/dynaliteEntry.cjs says what it exports).
 *
 * Why: the worker loaded some 90 files through the CommonJS loader (resolving, reading and
 * compiling each) on every stack start, on the core the main thread was not using only when the
 * host is idle. One file is read and compiled once.
 *
 * Two things a bundle cannot carry are put back: classic-level's native binding (node-gyp-build
 * finds the prebuilt `.node` file from classic-level's own folder, which is resolved from the
 * bundle's place when the binding is first needed, as `require('dynalite')` from here resolves),
 * and dynalite's request handlers, which it requires by a computed name (`'./actions/' + action`):
 * the extension is added so that esbuild bundles every file of those folders and finds them by
 * name. A dynalite that no longer has those lines fails the build instead of a run.
 */
async function bundleDynalite(outfile) {
  const binding = [
    "const { createRequire } = require('node:module');",
    "const { dirname } = require('node:path');",
    "const fromLevel = createRequire(createRequire(createRequire(__filename).resolve('dynalite')).resolve('level'));",
    "const classicLevel = fromLevel.resolve('classic-level');",
    "module.exports = createRequire(classicLevel)('node-gyp-build')(dirname(classicLevel));",
  ].join('\n');
  const computed = [
    ["require('./actions/' + action)", "require('./actions/' + action + '.js')"],
    ["require('./validations/' + action)", "require('./validations/' + action + '.js')"],
  ];
  let bindingReplaced = false;
  await build({
    entryPoints: [join(cli, 'scripts', 'dynaliteEntry.cjs')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [
      {
        name: 'dynalite-one-file',
        setup(b) {
          b.onLoad({ filter: /[\\/]classic-level[\\/]binding\.js$/ }, () => {
            bindingReplaced = true;
            return { contents: binding, loader: 'js' };
          });
          b.onLoad({ filter: /[\\/]dynalite[\\/]index\.js$/ }, (args) => {
            let text = readFileSync(args.path, 'utf8');
            for (const [from, to] of computed) {
              if (!text.includes(from)) throw new Error(`bundleCli: dynalite's index.js no longer has ${from}; see bundleDynalite`);
              text = text.replace(from, to);
            }
            return { contents: text, loader: 'js' };
          });
        },
      },
    ],
  });
  if (!bindingReplaced) throw new Error("bundleCli: classic-level's binding.js was not in dynalite's bundle to replace; see bundleDynalite");
  finishBundle(outfile, asciiOnly);
}

/**
 * Writes `<name>.inputs.json`: the sorted paths, from the repository root, of the files with code in
 * the bundle (a file esbuild read and tree-shook away entirely is not in it).
 */
function writeInputs(name, metafile) {
  const [output] = Object.values(metafile.outputs);
  const inputs = Object.entries(output.inputs)
    .filter(([f, { bytesInOutput }]) => bytesInOutput > 0 && !f.includes(':'))
    .map(([f]) => f)
    .map((f) => relative(repo, resolve(f)).split(sep).join('/'))
    .sort();
  writeFileSync(join(outdir, `${name}.inputs.json`), `${JSON.stringify(inputs, null, 0)}\n`);
}

const ids = {};
for (const bundle of BUNDLES) {
  const result = await build({
    entryPoints: [join(cli, 'dist', 'main.js')],
    ...COMMON,
    outfile: join(outdir, `${bundle.name}.cjs`),
    metafile: true,
    plugins: [onlyCommands(bundle.commands), sideBundles(), zodEnglishOnly(), lazyHttp2InSdkHandler(), {
      name: 'import-file-through-launcher',
      setup(b) {
        let replaced = false;
        let pythonReplaced = false;
        b.onLoad({ filter: /[\\/]runtime[\\/]dist[\\/]userfn[\\/]importFile\.js$/ }, () => {
          replaced = true;
          return { contents: 'export const importFile = (url) => __stepforge_import(url);', loader: 'js' };
        });
        // The Python worker's files are copied beside the bundle (below): found there, not two folders up.
        b.onLoad({ filter: /[\\/]runtime[\\/]dist[\\/]userfn[\\/]pythonSourceDir\.js$/ }, () => {
          pythonReplaced = true;
          return { contents: "import { fileURLToPath } from 'node:url';\nexport const pythonSourceDir = () => fileURLToPath(new URL('./python/', import.meta.url));", loader: 'js' };
        });
        // Without the replacement the full bundle would fail at run time, on the first user function
        // (a command bundle that imports neither module has nothing to replace).
        b.onEnd((r) => {
          if (bundle.name !== 'stepforge' && !bundle.stack) return;
          if (r.errors.length === 0 && !replaced) throw new Error('bundleCli: packages/runtime/dist/userfn/importFile.js was not in the bundle to replace');
          if (r.errors.length === 0 && !pythonReplaced) throw new Error('bundleCli: packages/runtime/dist/userfn/pythonSourceDir.js was not in the bundle to replace');
        });
      },
    }],
  });
  // A bundle for commands that run no workflow must not hold the AWS SDK or the embedded stack.
  if (bundle.name !== 'stepforge' && !bundle.stack) {
    const heavy = Object.keys(result.metafile.inputs).filter((f) => /node_modules[\\/]@aws-sdk[\\/]|node_modules[\\/]fauxqs[\\/]|[\\/]engine[\\/]dist[\\/]|[\\/]embedded[\\/]dist[\\/]EmbeddedStack\.js$/.test(f));
    if (heavy.length > 0) throw new Error(`bundleCli: ${bundle.name}.cjs holds ${heavy.slice(0, 3).join(', ')}${heavy.length > 3 ? ` and ${heavy.length - 3} more` : ''}: the commands ${JSON.stringify(bundle.commands)} must not import the embedded stack`);
  }
  // ASCII only: one character above U+007F anywhere in the file makes V8 hold the whole source as a
  // two-byte string, which costs every command ~100 ms and ~15 MB before it runs a line. esbuild
  // already escapes strings; what is left is in comments, and in two regular expressions (\u00b5s),
  // where a \u escape means the same character.
  const bundlePath = join(outdir, `${bundle.name}.cjs`);
  finishBundle(bundlePath, asciiOnly, memoizedInterop, wrapForLauncher);
  // The bundle's id names its code caches. V8 checks a cache only against the source's length (and
  // its own version and flags), so a rebuilt bundle of the same length would take a stale cache and
  // run old compiled code: caches are kept per bundle content instead, and older ones removed.
  ids[bundle.name] = createHash('sha256').update(readFileSync(bundlePath)).digest('hex').slice(0, 16);
  // The modules each bundle holds, by path from the repository (the minified text names none); esbuild reports them from the working directory, which resolve() starts from too:
  // what test/e2e/bundle.test.ts checks a bundle holds, and leaves out.
  writeInputs(bundle.name, result.metafile);
}
await bundleDynalite(join(outdir, 'dynalite.cjs'));
// Names the worker's code cache of it, as for the command bundles.
ids.dynalite = createHash('sha256').update(readFileSync(join(outdir, 'dynalite.cjs'))).digest('hex').slice(0, 16);
for (const file of ['dynaliteExpressionCache.cjs', 'dynaliteWorker.cjs', 'loopbackGuard.cjs']) copyFileSync(join(cli, '..', 'embedded', 'dist', file), join(outdir, file));
const pythonSrc = join(cli, '..', 'runtime', 'python');
rmSync(join(outdir, 'python'), { recursive: true, force: true });
mkdirSync(join(outdir, 'python'));
for (const file of readdirSync(pythonSrc).filter((f) => f.endsWith('.py'))) copyFileSync(join(pythonSrc, file), join(outdir, 'python', file));
for (const f of readdirSync(outdir)) if (f.endsWith('.v8cache')) rmSync(join(outdir, f), { force: true });
for (const [name, id] of Object.entries(ids)) writeFileSync(join(outdir, `${name}.id`), `${id}\n`);
// Which bundle serves which command; a command in none (or none given) is served by stepforge-help.
const commands = {};
for (const bundle of BUNDLES.slice(1)) for (const c of bundle.commands) commands[c] = bundle.name;
for (const c of ALL) commands[c] ??= 'stepforge';
writeFileSync(join(outdir, 'bundles.json'), `${JSON.stringify({ commands, otherwise: 'stepforge-help' }, null, 2)}\n`);
