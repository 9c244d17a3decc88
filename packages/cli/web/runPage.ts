import { api, ApiFailure, subscribe } from './api.js';
import { duration, h, pretty } from './dom.js';
import { drawGraph, type GraphView } from './graphView.js';
import { historyTable } from './historyTable.js';
import { stateRuns, statusOf, STATUS_LABEL, type HistoryEvent, type StateRun, type StateStatus } from './stateStatus.js';

interface ViewStep {
  id: string;
  kind: string;
  state: string;
  states: string[];
  parent?: string;
  location?: { file?: string; line: number; column: number };
}
interface Progress {
  id: string;
  state: string;
  reused: boolean;
  inputTokens: number;
  outputTokens: number;
}
interface Approval {
  approvalId: string;
  stepId: string;
  tool: string;
  args: unknown;
  createdAt: string;
}
interface RunView {
  run: {
    runId: string;
    workflow: string;
    displayName: string;
    status: string;
    startedAt: string;
    endedAt: string | null;
    idempotencyKey: string | null;
    parentRunId: string | null;
    output: unknown;
    error: { name?: string; message?: string } | null;
  };
  definition: { StartAt: string; States: Record<string, never>; Comment?: string } | null;
  steps: ViewStep[];
  progress: Progress[];
  history: HistoryEvent[];
  approvals: Approval[];
  source: { file: string; format: string; text: string; changed: boolean } | null;
}

const RUN_STATUS_CLASS: Record<string, StateStatus> = {
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  ABORTED: 'failed',
};

/** The run page: graph, state details, source, approvals, retry and restart, history; live while the run runs. */
export function runPage(root: HTMLElement, runId: string, setLive: (live: boolean) => void): () => void {
  let selected: string | undefined;
  // What the user has typed or chosen survives a live re-render: the restart step, approval
  // comments, the history's filters.
  let restartFrom: string | undefined;
  const comments = new Map<string, string>();
  const historyFilter = { type: '', text: '' };
  let graph: GraphView | undefined;
  let graphKey = '';
  let last: RunView | undefined;
  let loading = false;
  let again = false;
  const load = async (): Promise<void> => {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      performance.mark('sf:fetch-start');
      last = await api<RunView>('GET', `/view/runs/${encodeURIComponent(runId)}`);
      performance.mark('sf:render-start');
      render(last);
      performance.mark('sf:render-end');
      // Marks for the bench (bench/view.bench.ts): fetched, drawn, and painted (the next frame).
      requestAnimationFrame(() => setTimeout(() => performance.mark('sf:painted'), 0));
    } catch (e) {
      root.replaceChildren(h('p', { class: 'error', role: 'alert' }, e instanceof ApiFailure ? `${e.code}: ${e.message}` : String(e)));
    } finally {
      loading = false;
      if (again) {
        again = false;
        void load();
      }
    }
  };

  const render = (v: RunView): void => {
    const runs = stateRuns(v.history, v.run.status);
    // States of steps whose guard skipped them: not entered because the run chose not to.
    const skipped = new Set<string>();
    // A step that did not run in a run that succeeded was skipped (a guard, a branch not taken); in
    // a run that failed or was stopped, it was not reached.
    if (v.run.status === 'SUCCEEDED')
      for (const p of v.progress)
        if (p.state === 'skipped') for (const st of v.steps.find((s) => s.id === p.id)?.states ?? []) skipped.add(st);
    const state = { status: (n: string) => statusOf(n, runs, skipped), run: (n: string) => runs.get(n) };
    const key = JSON.stringify(v.definition);
    if (!graph || key !== graphKey) {
      performance.mark('sf:graph-start');
      graph = v.definition
        ? drawGraph(v.definition, state, (n) => {
            selected = n;
            render(last!);
          })
        : undefined;
      graphKey = key;
      performance.mark('sf:graph-end');
    } else graph.update(state);
    graph?.select(selected);
    const focusedState = (document.activeElement as Element | null)?.getAttribute?.('data-state');
    const focusedControl = (document.activeElement as Element | null)?.id || undefined;
    const started = Date.parse(v.run.startedAt);
    const ended = v.run.endedAt ? Date.parse(v.run.endedAt) : Date.now();
    const tokens = v.progress.reduce((n, p) => n + p.inputTokens + p.outputTokens, 0);
    const stepOfState = (name: string) => v.steps.find((s) => s.states.includes(name));
    const header = h(
      'section',
      { class: 'runhead', 'aria-labelledby': 'run-h', 'data-run': v.run.runId },
      h(
        'h1',
        { id: 'run-h' },
        `${v.run.displayName} `,
        h('span', { class: `pill s-${RUN_STATUS_CLASS[v.run.status] ?? 'notreached'}`, id: 'run-status' }, v.run.status),
      ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Run'),
        h('dd', { class: 'mono' }, v.run.runId),
        h('dt', {}, 'Started'),
        h('dd', {}, new Date(started).toLocaleString()),
        h('dt', {}, 'Duration'),
        h('dd', {}, duration(ended - started)),
        h('dt', {}, 'Tokens'),
        h('dd', {}, String(tokens)),
        v.run.idempotencyKey ? h('dt', {}, 'Idempotency key') : null,
        v.run.idempotencyKey ? h('dd', { class: 'mono' }, v.run.idempotencyKey) : null,
        v.run.parentRunId ? h('dt', {}, 'Forked from') : null,
        v.run.parentRunId ? h('dd', {}, h('a', { href: `#/runs/${v.run.parentRunId}` }, v.run.parentRunId)) : null,
      ),
      v.run.error
        ? h('p', { class: 'error', role: 'alert', id: 'run-error' }, `${v.run.error.name ?? 'Error'}: ${v.run.error.message ?? ''}`)
        : null,
      actions(v),
    );
    const legend = h(
      'ul',
      { class: 'legend', 'aria-label': 'Colours' },
      ...(Object.keys(STATUS_LABEL) as StateStatus[]).map((st) => h('li', {}, h('span', { class: `swatch s-${st}` }), STATUS_LABEL[st])),
    );
    const graphPanel = h(
      'section',
      { class: 'panel graphpanel', 'aria-labelledby': 'graph-h' },
      h('h2', { id: 'graph-h' }, 'Graph'),
      legend,
      h('div', { class: 'graphscroll' }, graph ? graph.element : h('p', {}, 'The definition of this run cannot be read.')),
    );
    const detail = selected
      ? stateDetail(selected, runs.get(selected), statusOf(selected, runs, skipped), stepOfState(selected), v.progress)
      : h(
          'p',
          { class: 'muted' },
          'Select a state (click it, or Tab to it and press Enter) to see its input, output, error, retries and duration.',
        );
    const step = selected ? stepOfState(selected) : undefined;
    const main = h(
      'div',
      { class: 'runbody' },
      graphPanel,
      h(
        'section',
        { class: 'panel detail', 'aria-labelledby': 'detail-h', id: 'state-detail' },
        h('h2', { id: 'detail-h' }, selected ? `State: ${selected}` : 'State'),
        detail,
      ),
      sourcePanel(v.source, step?.location?.line),
    );
    root.replaceChildren(
      header,
      v.approvals.length ? approvalsPanel(v.approvals) : '',
      main,
      historyTable(v.history, started, historyFilter),
    );
    const focusedId = focusedControl;
    if (focusedId) (document.getElementById(focusedId) as HTMLElement | null)?.focus();
    if (focusedState) (root.querySelector(`[data-state="${CSS.escape(focusedState)}"]`) as SVGGElement | null)?.focus();
    root.querySelector('.srcline.hit')?.scrollIntoView({ block: 'center' });
  };

  const actions = (v: RunView): HTMLElement => {
    const ended = v.run.status !== 'RUNNING';
    const msg = h('p', { class: 'muted', role: 'status', id: 'action-status' });
    const fork = async (path: string, body: unknown) => {
      try {
        const r = await api<{ runId: string }>('POST', path, body);
        location.hash = `#/runs/${r.runId}`;
      } catch (e) {
        msg.textContent = e instanceof ApiFailure ? `${e.code}: ${e.message}` : String(e);
      }
    };
    const from = h(
      'select',
      {
        id: 'restart-from',
        'aria-label': 'Restart from step',
        onchange: () => {
          restartFrom = from.value;
        },
      },
      ...v.steps.filter((s) => s.parent === undefined).map((s) => h('option', { value: s.id, selected: s.id === restartFrom }, s.id)),
    );
    return h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', id: 'retry', disabled: !ended, onclick: () => fork(`/runs/${v.run.runId}/retry`, {}) },
        'Retry unfinished steps',
      ),
      h('label', { for: 'restart-from' }, 'Restart from'),
      from,
      h(
        'button',
        { type: 'button', id: 'restart', disabled: !ended, onclick: () => fork(`/runs/${v.run.runId}/restart`, { from: from.value }) },
        'Restart',
      ),
      !ended
        ? h(
            'button',
            {
              type: 'button',
              id: 'cancel',
              onclick: () => void api('POST', `/runs/${v.run.runId}/cancel`, {}).then(load, (e: Error) => (msg.textContent = e.message)),
            },
            'Cancel run',
          )
        : null,
      msg,
    );
  };

  const approvalsPanel = (list: Approval[]): HTMLElement =>
    h(
      'section',
      { class: 'panel approvals', 'aria-labelledby': 'approvals-h' },
      h('h2', { id: 'approvals-h' }, 'Waiting for approval'),
      ...list.map((a) => {
        const comment = h('textarea', {
          id: `comment-${a.approvalId}`,
          rows: 2,
          'aria-label': `Comment on the ${a.tool} call of ${a.stepId}`,
          oninput: () => comments.set(a.approvalId, comment.value),
        });
        comment.value = comments.get(a.approvalId) ?? '';
        const status = h('p', { role: 'status', class: 'muted' });
        const decide = (decision: 'approve' | 'reject') => async () => {
          try {
            await api('POST', `/approvals/${a.approvalId}`, {
              decision,
              ...(comment.value.trim() ? { comment: comment.value.trim() } : {}),
            });
            status.textContent = decision === 'approve' ? 'Approved' : 'Rejected';
            void load();
          } catch (e) {
            status.textContent = e instanceof ApiFailure ? `${e.code}: ${e.message}` : String(e);
          }
        };
        return h(
          'article',
          { class: 'approval', 'data-approval': a.approvalId },
          h('p', {}, h('strong', {}, a.stepId), ` wants to call `, h('code', {}, a.tool), ' with'),
          h('pre', {}, pretty(a.args)),
          h('label', { for: `comment-${a.approvalId}` }, 'Comment'),
          comment,
          h(
            'div',
            { class: 'actions' },
            h('button', { type: 'button', class: 'approve', onclick: decide('approve') }, 'Approve'),
            h('button', { type: 'button', class: 'reject', onclick: decide('reject') }, 'Reject'),
          ),
          status,
        );
      }),
    );

  void load();
  const stop = subscribe(`/view/runs/${encodeURIComponent(runId)}/stream`, () => void load(), setLive);
  return stop;
}

function stateDetail(
  name: string,
  run: StateRun | undefined,
  status: StateStatus,
  step: ViewStep | undefined,
  progress: Progress[],
): HTMLElement {
  const p = step ? progress.find((x) => x.id === step.id) : undefined;
  const where = step?.location ? `${step.location.file ?? ''}:${step.location.line}:${step.location.column}` : undefined;
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Status'),
      h('dd', {}, h('span', { class: `pill s-${status}`, id: 'state-status' }, STATUS_LABEL[status])),
      h('dt', {}, 'Step'),
      h('dd', {}, step ? `${step.id} (${step.kind})${p?.reused ? ', reused from the parent run' : ''}` : '—'),
      h('dt', {}, 'Source'),
      h('dd', { id: 'state-source' }, where ?? '—'),
      h('dt', {}, 'Duration'),
      h('dd', {}, duration(run?.durationMs)),
      h('dt', {}, 'Retries'),
      h('dd', { id: 'state-retries' }, String(run?.retries ?? 0)),
      run?.iterations ? h('dt', {}, 'Iterations') : null,
      run?.iterations
        ? h(
            'dd',
            { id: 'state-iterations' },
            `${run.iterations.started} started, ${run.iterations.succeeded} succeeded, ${run.iterations.failed} failed`,
          )
        : null,
    ),
    run?.error
      ? h(
          'div',
          { class: 'error', id: 'state-error', role: 'alert' },
          h('strong', {}, run.error.error ?? 'Error'),
          h('pre', {}, pretty(run.error.cause ?? '')),
        )
      : null,
    h('h3', {}, 'Input'),
    h('pre', { id: 'state-input' }, run?.input !== undefined ? pretty(run.input) : '—'),
    h('h3', {}, 'Output'),
    h('pre', { id: 'state-output' }, run?.output !== undefined ? pretty(run.output) : '—'),
  );
}

function sourcePanel(source: RunView['source'], line: number | undefined): HTMLElement {
  if (!source)
    return h(
      'section',
      { class: 'panel source' },
      h('h2', {}, 'Source'),
      h('p', { class: 'muted' }, "The workflow's file is not known for this run."),
    );
  return h(
    'section',
    { class: 'panel source', 'aria-labelledby': 'source-h' },
    h('h2', { id: 'source-h' }, `Source: ${source.file}`),
    source.changed ? h('p', { class: 'muted' }, 'The file has changed since this run: lines may not match.') : null,
    h(
      'pre',
      { class: 'src', tabindex: '0' },
      ...source.text
        .split('\n')
        .map((t, i) => h('span', { class: `srcline${i + 1 === line ? ' hit' : ''}`, 'data-line': String(i + 1) }, t + '\n')),
    ),
  );
}
