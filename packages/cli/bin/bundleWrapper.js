'use strict';
// The function a command bundle's code runs in, as Node's module wrapper does for a CommonJS file,
// with one argument more: `__stepforge_import`, the launcher's import() (see scripts/bundleCli.mjs).
// The build writes it around each command bundle's text (so the file is the script the launcher
// compiles, and no copy of the text is made to wrap it); loadCli adds it to a bundle without it.
const BUNDLE_WRAPPER = {
  head: '(function (exports, require, module, __filename, __dirname, __stepforge_import) {',
  tail: '\n})',
};

module.exports = { BUNDLE_WRAPPER };
