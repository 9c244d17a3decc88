// Bundles the execution view (packages/cli/web: plain TypeScript, dagre for the layout) into
// dist/web: index.html, assets/app.js, assets/app.css. Run by `npm run build`; serve reads the
// files from there, so a page never loads anything from elsewhere at run time.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(cli, 'dist', 'web');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(cli, 'web', 'main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(cli, 'web', 'app.css'), join(out, 'app.css'));
copyFileSync(join(cli, 'web', 'index.html'), join(out, 'index.html'));
