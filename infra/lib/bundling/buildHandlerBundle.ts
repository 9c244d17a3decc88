// One handler's Lambda bundle built in process with the settings StepHandlers deploys with, for the
// checks and the bench that read what a deployed bundle holds (CDK itself runs esbuild's CLI).
import { join } from 'node:path';
import { build, type BuildResult } from 'esbuild';
import type { HandlerId } from '@stepforge/contract';
import { handlerEntry } from '../constructs/StepHandlers.js';
import { HANDLER_BUNDLE, SOURCE_MAP } from './handlerBundling.js';

/** How to build: with a source map, and how much esbuild says. */
export interface BundleOptions {
  readonly sourceMap?: boolean;
  readonly logLevel?: 'silent' | 'error';
}

/** Builds `handler`'s entry from the repository at `root` into `outfile`, with its metafile (and its source map when asked). */
export function buildHandlerBundle(
  root: string,
  handler: HandlerId,
  outfile: string,
  options: BundleOptions = {},
): Promise<BuildResult<{ metafile: true }>> {
  return buildWithHandlerSettings(root, handlerEntry(join(root, 'packages/runtime/src/handlers'), handler)!, outfile, options);
}

/** Builds any entry file of the repository at `root` as a handler's is built (the checks of what the bundles replace run such bundles). */
export function buildWithHandlerSettings(
  root: string,
  entry: string,
  outfile: string,
  options: BundleOptions = {},
): Promise<BuildResult<{ metafile: true }>> {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    logLevel: options.logLevel ?? 'silent',
    metafile: true,
    format: HANDLER_BUNDLE.format,
    target: HANDLER_BUNDLE.target,
    minify: HANDLER_BUNDLE.minify,
    mainFields: HANDLER_BUNDLE.mainFields,
    banner: { js: HANDLER_BUNDLE.banner },
    external: HANDLER_BUNDLE.external,
    define: HANDLER_BUNDLE.define,
    alias: HANDLER_BUNDLE.alias,
    tsconfig: join(root, 'tsconfig.json'),
    ...(options.sourceMap ? { sourcemap: SOURCE_MAP.sourceMap, sourcesContent: SOURCE_MAP.sourcesContent } : {}),
  });
}
