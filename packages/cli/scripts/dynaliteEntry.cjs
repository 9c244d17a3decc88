// The entry of dist/bundle/dynalite.cjs, the one-file dynalite the dynalite worker loads when it is
// there (see packages/embedded/src/dynaliteWorker.cjs and scripts/bundleCli.mjs). Each part is
// required on demand, in the order the worker needs them: `level` first (the worker wraps its
// `Level` before dynalite's store module takes it), then the three expression parsers (the worker
// memoises their `parse`), then dynalite itself. The bundle keeps one instance of each module, so
// what the worker changes on these objects is what dynalite uses.
'use strict';

exports.level = () => require('level');
exports.parsers = () => ({
  conditionParser: require('dynalite/db/conditionParser'),
  updateParser: require('dynalite/db/updateParser'),
  projectionParser: require('dynalite/db/projectionParser'),
});
exports.dynalite = () => require('dynalite');
