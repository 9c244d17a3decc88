import { h } from './dom.js';
import type { HistoryEvent } from './stateStatus.js';

const ROW = 28;

/** The name an event's details give (a state's or a Map's), for the table and the filter. */
function stepOf(e: HistoryEvent): string {
  for (const [k, v] of Object.entries(e))
    if (k.endsWith('EventDetails') && v && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string')
      return (v as { name: string }).name;
  return '';
}

/**
 * The event history as a table with AWS's event names, filterable by type and text. Only the rows
 * in view are in the document, so 10,000 events scroll as smoothly as ten.
 */
export function historyTable(
  events: readonly HistoryEvent[],
  startedAt: number,
  filter: { type: string; text: string } = { type: '', text: '' },
): HTMLElement {
  const rows = events.map((e) => ({
    e,
    step: stepOf(e),
    at: (typeof e.timestamp === 'number' ? e.timestamp : Date.parse(e.timestamp)) - startedAt,
  }));
  const types = [...new Set(events.map((e) => e.type))].sort();
  let shown = rows;
  const typeSel = h(
    'select',
    { id: 'history-type', 'aria-label': 'Event type' },
    h('option', { value: '' }, 'All event types'),
    ...types.map((t) => h('option', { value: t }, t)),
  );
  const text = h('input', { id: 'history-filter', type: 'search', placeholder: 'Filter by state or text', 'aria-label': 'Filter events' });
  typeSel.value = types.includes(filter.type) ? filter.type : '';
  text.value = filter.text;
  const count = h('span', { class: 'muted', 'aria-live': 'polite' });
  const spacer = h('div', { class: 'vspacer' });
  const body = h('div', { class: 'vrows', role: 'rowgroup' });
  const scroller = h(
    'div',
    { class: 'vscroll', tabindex: '0', role: 'table', 'aria-label': 'Event history', 'aria-rowcount': String(rows.length) },
    h(
      'div',
      { class: 'vrow vhead', role: 'row' },
      ...['ID', 'Type', 'State', 'Elapsed (ms)', 'Details'].map((c) => h('span', { role: 'columnheader' }, c)),
    ),
    spacer,
    body,
  );
  const render = () => {
    const first = Math.max(0, Math.floor(scroller.scrollTop / ROW) - 5);
    const last = Math.min(shown.length, first + Math.ceil((scroller.clientHeight || 400) / ROW) + 10);
    body.style.transform = `translateY(${first * ROW}px)`;
    body.replaceChildren(
      ...shown.slice(first, last).map(({ e, step, at }) => {
        const d = Object.entries(e).find(([k]) => k.endsWith('EventDetails'))?.[1];
        const brief = d && typeof d === 'object' ? JSON.stringify(d).slice(0, 160) : '';
        return h(
          'div',
          { class: `vrow ${/Failed|TimedOut|Aborted/.test(e.type) ? 'bad' : ''}`, role: 'row', 'data-event-id': String(e.id) },
          h('span', { role: 'cell' }, String(e.id)),
          h('span', { role: 'cell' }, e.type),
          h('span', { role: 'cell' }, step),
          h('span', { role: 'cell' }, String(at)),
          h('span', { role: 'cell', class: 'mono' }, brief),
        );
      }),
    );
  };
  const apply = () => {
    const t = (filter.type = typeSel.value);
    filter.text = text.value;
    const q = text.value.trim().toLowerCase();
    shown = rows.filter(
      (r) => (t === '' || r.e.type === t) && (q === '' || r.step.toLowerCase().includes(q) || r.e.type.toLowerCase().includes(q)),
    );
    spacer.style.height = `${shown.length * ROW}px`;
    count.textContent = `${shown.length} of ${rows.length} events`;
    render();
  };
  let frame = 0;
  scroller.addEventListener('scroll', () => {
    if (!frame)
      frame = requestAnimationFrame(() => {
        frame = 0;
        render();
      });
  });
  typeSel.addEventListener('change', apply);
  text.addEventListener('input', apply);
  queueMicrotask(apply);
  return h(
    'section',
    { class: 'panel history', 'aria-labelledby': 'history-h' },
    h('h2', { id: 'history-h' }, 'Event history'),
    h('div', { class: 'filters' }, typeSel, text, count),
    scroller,
  );
}
