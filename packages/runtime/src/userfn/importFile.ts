/**
 * Imports an ES module by its file URL: user functions, and the handler modules of `stepforge asl
 * run`. It is the one dynamic import of a file outside the code, so that the CLI's bundle
 * (packages/cli/scripts/bundleCli.mjs) can put another in its place. The bundle runs from V8's code
 * cache, and on Node 20 code loaded from that cache has lost the callback an `import()` in it
 * needs ("A dynamic import callback was not specified"); there the import goes through the
 * launcher, an ordinary module (packages/cli/bin/loadCli.js).
 */
export function importFile(url: string): Promise<Record<string, unknown>> {
  return import(url) as Promise<Record<string, unknown>>;
}
