import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StepforgeError } from '@stepforge/compiler';

/**
 * Bundles a user's workflow module (TypeScript or JavaScript, with the files it imports by
 * relative path) into one ES module under `<projectDir>/.stepforge/code/`, and returns its path.
 *
 * Why a bundle: Node 20 cannot import `.ts`, and the function handler must import the very code
 * the workflow was compiled from. The file is named by a hash of its content, so a changed module
 * gets a new URL (Node caches modules by URL for the life of a process) and an unchanged one is
 * written once. Packages stay outside the bundle, imported from where the module's own imports
 * resolve (absolute `file:` URLs), so `stepforge` is the one installed next to the user's code and
 * the bundle works wherever it is kept.
 *
 * Errors: `module_load_failed` naming the file (the source does not parse, an import is missing).
 */
export async function bundleCodeModule(projectDir: string, file: string, generated?: string): Promise<string> {
  const source = resolve(projectDir, file);
  const location = { file, line: 1, column: 1 };
  if (!existsSync(source)) throw new StepforgeError('module_load_failed', `cannot load the module ${file}: no such file`, { location });
  // `generated`: the module's source made from `file` (a Kortyx workflow file), whose relative
  // imports resolve from the file's folder.
  const entry =
    generated === undefined
      ? { entryPoints: [source] }
      : { stdin: { contents: generated, resolveDir: dirname(source), sourcefile: source, loader: 'js' as const } };
  // Loaded when a module is first bundled: the documents' commands never pay for it.
  const { build } = await import('esbuild');
  let text: string;
  try {
    const out = await build({
      ...entry,
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'silent',
      // Error stacks point at the user's lines, not the bundle's.
      sourcemap: 'inline',
      plugins: [
        {
          name: 'packages-by-url',
          setup(b) {
            b.onResolve({ filter: /^[^./]/ }, async (args) => {
              if (args.pluginData?.byUrl || args.path.startsWith('node:') || builtinModules.includes(args.path)) return undefined;
              const r = await b.resolve(args.path, {
                kind: args.kind,
                resolveDir: args.resolveDir,
                importer: args.importer,
                pluginData: { byUrl: true },
              });
              if (r.errors.length > 0) return { errors: r.errors };
              return { path: pathToFileURL(r.path).href, external: true };
            });
          },
        },
      ],
    });
    text = out.outputFiles[0]!.text;
  } catch (e) {
    const errors = (e as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors;
    const first = errors?.[0];
    const where = first?.location ? { file: first.location.file, line: first.location.line, column: first.location.column + 1 } : location;
    throw new StepforgeError('module_load_failed', `cannot load the module ${file}: ${first?.text ?? (e as Error).message}`, {
      location: where,
    });
  }
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const dir = join(projectDir, '.stepforge', 'code');
  const out = join(dir, `${basename(source, extname(source)).replace(/\.workflow$/, '')}-${hash}.mjs`);
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    // Written whole under a temporary name first: a reader never imports half a file.
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, out);
  }
  return out;
}
