import { api, ApiFailure, subscribe } from './api.js';
import { duration, h } from './dom.js';

interface RunRow {
  runId: string;
  workflow: string;
  displayName: string;
  status: string;
  startedAt: string;
  endedAt: string | null;
  idempotencyKey: string | null;
  tokens: { input: number; output: number };
}
const STATUSES = ['', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** The runs list: filters by workflow, status and text; updated live. */
export function runsList(root: HTMLElement, setLive: (live: boolean) => void): () => void {
  const status = h(
    'select',
    { id: 'filter-status', 'aria-label': 'Status' },
    ...STATUSES.map((s) => h('option', { value: s }, s || 'Any status')),
  );
  const workflow = h('select', { id: 'filter-workflow', 'aria-label': 'Workflow' }, h('option', { value: '' }, 'Any workflow'));
  const text = h('input', { type: 'search', id: 'filter-text', placeholder: 'Run id or idempotency key', 'aria-label': 'Search runs' });
  const tbody = h('tbody');
  let rows: RunRow[] = [];
  const draw = () => {
    const q = text.value.trim().toLowerCase();
    const shown = rows.filter(
      (r) =>
        (!status.value || r.status === status.value) &&
        (!workflow.value || r.workflow === workflow.value) &&
        (!q || r.runId.includes(q) || (r.idempotencyKey ?? '').toLowerCase().includes(q)),
    );
    tbody.replaceChildren(
      ...shown.map((r) =>
        h(
          'tr',
          { 'data-run': r.runId },
          h('td', {}, h('a', { href: `#/runs/${r.runId}` }, r.displayName)),
          h(
            'td',
            {},
            h(
              'span',
              { class: `pill s-${r.status === 'RUNNING' ? 'running' : r.status === 'SUCCEEDED' ? 'succeeded' : 'failed'}` },
              r.status,
            ),
          ),
          h('td', {}, new Date(r.startedAt).toLocaleString()),
          h('td', {}, duration((r.endedAt ? Date.parse(r.endedAt) : Date.now()) - Date.parse(r.startedAt))),
          h('td', {}, String(r.tokens.input + r.tokens.output)),
          h('td', { class: 'mono' }, r.idempotencyKey ?? ''),
          h('td', { class: 'mono' }, r.runId.slice(0, 8)),
        ),
      ),
    );
    if (shown.length === 0) tbody.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No runs match.')));
  };
  const load = async () => {
    try {
      rows = (await api<{ runs: RunRow[] }>('GET', '/view/runs')).runs;
      const names = [...new Set(rows.map((r) => r.workflow))].sort();
      const keep = workflow.value;
      workflow.replaceChildren(
        h('option', { value: '' }, 'Any workflow'),
        ...names.map((n) => h('option', { value: n }, rows.find((r) => r.workflow === n)!.displayName)),
      );
      workflow.value = keep;
      draw();
    } catch (e) {
      root.replaceChildren(h('p', { class: 'error', role: 'alert' }, e instanceof ApiFailure ? `${e.code}: ${e.message}` : String(e)));
    }
  };
  for (const el of [status, workflow]) el.addEventListener('change', draw);
  text.addEventListener('input', draw);
  root.replaceChildren(
    h('h1', {}, 'Runs'),
    h('div', { class: 'filters' }, workflow, status, text),
    h(
      'div',
      { class: 'tablewrap' },
      h(
        'table',
        { class: 'runs' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Workflow', 'Status', 'Started', 'Duration', 'Tokens', 'Idempotency key', 'Run'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        tbody,
      ),
    ),
  );
  void load();
  return subscribe('/view/stream', () => void load(), setLive);
}
