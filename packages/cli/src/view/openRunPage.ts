import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { StepforgeError } from '@stepforge/contract';
import type { CliIo } from '../CliIo.js';
import { StackRegistry } from '@stepforge/embedded';

/** The command that opens a URL in the user's browser: $BROWSER when set, else the platform's opener. */
function opener(env: Readonly<Record<string, string | undefined>>): string {
  if (env.BROWSER) return env.BROWSER;
  return process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
}

/**
 * `runs show ID --open`: opens the run's page of the execution view that this project's `serve`
 * serves, signed in with a one-time code (not the token itself, which a command line would show to
 * other users of the machine). Returns the page's address without the code.
 */
export async function openRunPage(io: CliIo, runId: string, env: Readonly<Record<string, string | undefined>> = io.env): Promise<string> {
  const live = new StackRegistry(join(io.cwd, '.stepforge')).findLive();
  if (live?.apiUrl === undefined) {
    throw new StepforgeError('serve_not_running', 'no stepforge serve serves this project: the execution view is a page of serve', {
      hint: 'start stepforge serve in this folder (it keeps running), then run this again',
    });
  }
  const auth = { authorization: `Bearer ${live.apiToken}` };
  const run = await fetch(`${live.apiUrl}/runs/${encodeURIComponent(runId)}`, { headers: auth });
  if (!run.ok) {
    const err = ((await run.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }).error;
    throw new StepforgeError(
      err?.code ?? 'internal',
      err?.message ?? `serve answered ${run.status}`,
      err?.code === 'unknown_run' ? { hint: "'stepforge runs list' shows the runs" } : {},
    );
  }
  const minted = await fetch(`${live.apiUrl}/view/session-codes`, { method: 'POST', headers: auth });
  const { code } = (await minted.json()) as { code: string };
  const page = `${live.apiUrl}/#/runs/${encodeURIComponent(runId)}`;
  const command = opener(env);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, [`${page}?code=${code}`], { detached: true, stdio: 'ignore', shell: false });
    child.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new StepforgeError('browser_not_opened', `cannot start ${command} to open the page: ${e.code ?? e.message}`, {
          hint: `set BROWSER to your browser's command, or open ${page} and enter apiToken from .stepforge/stack.json`,
        }),
      ),
    );
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
  io.out(`opened ${page} in the browser\n`);
  return page;
}
