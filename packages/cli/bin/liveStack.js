'use strict';
// The project's live stack as `.stepforge/stack.json` names it, read by the launcher before it loads
// anything else: whether to start a dynalite worker ahead (loadCli.js) and whether `run` can go to
// a serve (relayRun.js). StackRegistry.findLive (in the bundle) is what the commands themselves trust.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * The stack.json of the project in `cwd` when it names a live process other than this one, else
 * undefined. A pid that is alive proves little (pids are reused): a wrong guess costs the caller
 * only its shortcut, since the command checks the stack further itself.
 */
function liveStack(cwd) {
  let stack;
  try {
    stack = JSON.parse(readFileSync(join(cwd, '.stepforge', 'stack.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const pid = stack?.pid;
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return undefined;
  }
  return stack;
}

module.exports = { liveStack };
