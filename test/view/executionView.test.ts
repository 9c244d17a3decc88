import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService as RunService } from '../../packages/embedded/src/RunService.js';
import { startServe, type ServeHandle } from '../../packages/cli/src/commands/serve.js';
import { REPO, bufferIo, tempProject } from '../e2e/support/testIo.js';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots of each state the tests reach, kept as artefacts (gitignored). */
const ARTIFACTS = join(REPO, 'test', 'view', 'artifacts');
const FIXTURES = join(REPO, 'test', 'view', 'fixtures');

/** Chromium as Debian installs it, headless, with a profile of its own that nothing else uses. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'sf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

describe.skipIf(!existsSync(CHROMIUM))(
  `Execution view in Chromium${existsSync(CHROMIUM) ? '' : ' (skipped: /usr/bin/chromium is absent; apt-get install -y chromium)'}`,
  () => {
    const project = tempProject('sf-view-');
    let stack: EmbeddedStack;
    let service: RunService;
    let serve: ServeHandle;
    let browser: { context: BrowserContext; close(): Promise<void> };
    let page: Page;
    const auth = () => ({ authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' });
    const post = async (path: string, body: unknown) =>
      (await fetch(`${serve.url}${path}`, { method: 'POST', headers: auth(), body: JSON.stringify(body) })).json() as Promise<any>;
    const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    const statusOf = (state: string) => page.locator(`g.state[data-state="${state}"]`).first().getAttribute('data-status');
    /** Opens a run's page signed in with a one-time code, as `runs show --open` does. */
    const openRun = async (runId: string) => {
      const { code } = await post('/view/session-codes', {});
      await page.goto(`${serve.url}/#/runs/${runId}?code=${code}`);
      await page.locator(`section.runhead[data-run="${runId}"]`).waitFor();
    };
    /** Waits until the page shows this run with this status. */
    const runStatus = (runId: string, status: string) =>
      page.locator(`section.runhead[data-run="${runId}"] #run-status`, { hasText: status }).waitFor({ timeout: 30_000 });

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      mkdirSync(join(project.dir, 'workflows'));
      cpSync(FIXTURES, join(project.dir, 'workflows'), { recursive: true });
      stack = await openStack({
        projectDir: project.dir,
        inMemory: true,
        env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_LOCAL_SCRIPT: join(project.dir, 'workflows', 'release.local-script.json') },
      });
      service = new RunService(stack, project.dir);
      const io = bufferIo(project.dir);
      serve = await startServe(io, service, 0);
      expect(io.stderr()).toBe('');
      browser = await launchChromium();
      page = await browser.context.newPage();
    });
    afterAll(async () => {
      await browser?.close();
      await serve?.close();
      await stack?.close();
      project.remove();
    });

    it('serves the page without the token and the data only with it; a sign-in code works once', async () => {
      const html = await fetch(`${serve.url}/`);
      expect(html.status).toBe(200);
      expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await html.text()).toContain('<script type="module" src="/assets/app.js">');
      const data = await fetch(`${serve.url}/view/runs`);
      expect([data.status, ((await data.json()) as any).error.code]).toEqual([401, 'unauthorized']);
      const { code } = await post('/view/session-codes', {});
      const first = await fetch(`${serve.url}/view/session`, { method: 'POST', body: JSON.stringify({ code }) });
      expect([first.status, ((await first.json()) as any).token]).toEqual([200, serve.token]);
      const again = await fetch(`${serve.url}/view/session`, { method: 'POST', body: JSON.stringify({ code }) });
      expect([again.status, ((await again.json()) as any).error.code]).toEqual([401, 'invalid_code']);
      const bad = await fetch(`${serve.url}/view/runs?status=done`, { headers: auth() });
      expect([bad.status, ((await bad.json()) as any).error]).toEqual([
        400,
        { code: 'invalid_request', message: "status must be one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, got 'done'" },
      ]);
      const unknown = await fetch(`${serve.url}/view/runs/nope`, { headers: auth() });
      expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([404, 'unknown_run']);
    });

    let approvedRun = '';
    it('colours a run with a parallel pair, a Map and an approval gate while it waits, takes the approval in place, and colours it finished', async () => {
      const started = await post('/workflows/release/runs', { input: { version: '1.0' } });
      approvedRun = started.runId;
      await openRun(approvedRun);
      // Live: the approval arrives without a reload.
      await page.locator('article.approval').waitFor({ timeout: 30_000 });
      await page.locator('g.state[data-state="publish"][data-status="waiting"]').waitFor();
      expect(await page.locator('#run-status').textContent()).toBe('RUNNING');
      expect(await statusOf('[notes & outline]')).toBe('succeeded');
      expect(await statusOf('notes: call tools')).toBe('succeeded');
      expect(await page.locator('g.state[data-state="notes: call tools"] .badge').textContent()).toBe('2/2 iterations');
      expect(await statusOf('notes: tool')).toBe('succeeded');
      expect(await statusOf('outline')).toBe('succeeded');
      expect(await statusOf('receipt')).toBe('notreached');
      expect(await statusOf('notes: out of budget')).toBe('notreached');
      // Parallel and Map are drawn as groups around their states.
      expect(await page.locator('rect.group-parallel').count()).toBe(1);
      expect(await page.locator('rect.group-map').count()).toBe(1);
      expect(await page.locator('article.approval pre').textContent()).toContain('echo announcing release 1.0');
      await shot('1-waiting-for-approval');

      await page.locator('article.approval textarea').fill('ship it');
      await page.locator('article.approval button.approve').click();
      await runStatus(approvedRun, 'SUCCEEDED');
      await page.locator('g.state[data-state="receipt"][data-status="succeeded"]').waitFor();
      expect(await statusOf('publish')).toBe('succeeded');
      expect(await page.locator('article.approval').count()).toBe(0);
      const decided = (await stack.runtime.approvals.list('APPROVED')).filter((a) => a.runId === approvedRun);
      expect(decided).toMatchObject([{ decidedBy: 'api', reason: 'ship it', stepId: 'publish' }]);

      // A state by keyboard: its input, output, retries, duration and where its step is written.
      await page.locator('g.state[data-state="publish"]').focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#detail-h').textContent()).toBe('State: publish');
      expect(await page.locator('#state-source').textContent()).toBe('workflows/release.chain.yaml:4:37');
      expect(await page.locator('#state-output').textContent()).toContain('announcing release 1.0');
      expect(await page.locator('#state-input').textContent()).not.toBe('—');
      expect(await page.locator('#state-retries').textContent()).toBe('0');
      expect(await page.locator('.srcline.hit').textContent()).toBe('chain: "[notes@fs-list & outline] > publish > receipt"\n');
      await page.locator('g.state[data-state="notes: call tools"]').click();
      expect(await page.locator('#state-iterations').textContent()).toBe('2 started, 2 succeeded, 0 failed');

      // The history, with AWS's event names, filtered by type.
      await page.locator('#history-type').selectOption('MapIterationStarted');
      await expect.poll(() => page.locator('.vrows .vrow').count()).toBe(2);
      expect(await page.locator('.vrows .vrow span:nth-child(3)').allTextContents()).toEqual(['notes: call tools', 'notes: call tools']);
      await page.locator('#history-type').selectOption('');
      await shot('2-succeeded');
    });

    it("shows a failed state's error: an approval rejected from the page fails publish with ApprovalRejected", async () => {
      const started = await post('/workflows/release/runs', { input: { version: '2.0' } });
      await openRun(started.runId);
      await page.locator('article.approval').waitFor({ timeout: 30_000 });
      const approvalId = (await page.locator('article.approval').getAttribute('data-approval'))!;
      await page.locator('article.approval textarea').fill('not today');
      await page.locator('article.approval button.reject').click();
      await runStatus(started.runId, 'FAILED');
      // The compiled machine catches a step's error and ends in its Fail state: publish is caught, Failed failed.
      await page.locator('g.state[data-state="publish"][data-status="caught"]').waitFor();
      expect(await statusOf('Failed')).toBe('failed');
      expect(await statusOf('[notes & outline]')).toBe('succeeded');
      expect(await statusOf('receipt')).toBe('notreached');
      await page.locator('g.state[data-state="publish"]').click();
      expect(await page.locator('#state-status').textContent()).toBe('Caught error');
      expect(await page.locator('#state-error strong').textContent()).toBe('ApprovalRejected');
      expect(await page.locator('#state-error pre').textContent()).toContain(`approval ${approvalId}`);
      await page.locator('g.state[data-state="Failed"]').click();
      expect(await page.locator('#state-status').textContent()).toBe('Failed');
      expect(await page.locator('#state-error strong').textContent()).toBe('ApprovalRejected');
      expect(await page.locator('#run-error').textContent()).toContain(
        `ApprovalRejected: step 'publish' failed: approval ${approvalId} was rejected`,
      );
      expect(await stack.runtime.approvals.get(approvalId)).toMatchObject({ status: 'REJECTED', decidedBy: 'api', reason: 'not today' });
      await shot('3-failed');
    });

    it('restarts a run from a step on its page: the fork reuses the committed steps and re-runs the rest', async () => {
      await openRun(approvedRun);
      await page.locator('#restart-from').selectOption('receipt');
      await page.locator('#restart').click();
      await page.waitForFunction((old) => !(globalThis as any).location.hash.includes(old), approvedRun);
      const forkId = /#\/runs\/([^?]+)/.exec(page.url())![1]!;
      await runStatus(forkId, 'SUCCEEDED');
      const details = await service.details(forkId);
      expect(details.run.parentRunId).toBe(approvedRun);
      expect(details.steps.map((s) => [s.id, s.state, s.reused])).toEqual([
        ['notes', 'succeeded', true],
        ['outline', 'succeeded', true],
        ['publish', 'succeeded', true],
        ['receipt', 'succeeded', false],
      ]);
      await page.locator('g.state[data-state="publish"]').click();
      expect(await page.locator('#state-detail').textContent()).toContain('publish (tool), reused from the parent run');
      expect(await page.locator('.facts a').textContent()).toBe(approvedRun);
      await shot('4-fork');
    });

    it('lists the runs with filters, and fits a narrow window', async () => {
      await page.goto(`${serve.url}/#/`);
      await page.locator('table.runs tbody tr[data-run]').first().waitFor();
      expect(await page.locator('table.runs tbody tr[data-run]').count()).toBe(3);
      await page.locator('#filter-status').selectOption('FAILED');
      expect(await page.locator('table.runs tbody tr[data-run]').count()).toBe(1);
      await page.locator('#filter-status').selectOption('');
      await shot('5-runs');
      await page.setViewportSize({ width: 420, height: 800 });
      await openRun(approvedRun);
      // Nothing wider than the window but what scrolls inside its own box (the graph, the tables).
      expect(
        await page.evaluate(() => {
          const w = globalThis as any;
          return w.document.documentElement.scrollWidth <= w.innerWidth;
        }),
      ).toBe(true);
      await shot('6-narrow');
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  },
);
