import { s } from './dom.js';
import { layoutGraph, stateGraph, type Layout, type StateGraph } from './stateGraph.js';
import { STATUS_LABEL, type StateRun, type StateStatus } from './stateStatus.js';

/** A graph of at most this many states is scaled to fit its panel; a larger one keeps its size and scrolls. */
const FIT_NODES = 80;

/** What the graph shows per state: its status, and for a Map its iterations. */
export interface GraphState {
  status(name: string): StateStatus;
  run(name: string): StateRun | undefined;
}

/** The drawn graph: an SVG whose states are buttons (Tab, Enter) that call `onSelect`. */
export interface GraphView {
  readonly element: SVGSVGElement;
  readonly graph: StateGraph;
  readonly layout: Layout;
  /** Recolours the states (a live run moved on) without laying the graph out again. */
  update(state: GraphState): void;
  select(name: string | undefined): void;
}

/** Lays out and draws a state machine definition. */
export function drawGraph(
  definition: { StartAt: string; States: Record<string, never> },
  state: GraphState,
  onSelect: (name: string) => void,
): GraphView {
  const graph = stateGraph(definition);
  const layout = layoutGraph(graph);
  const svg = s('svg', {
    viewBox: `0 0 ${Math.ceil(layout.width)} ${Math.ceil(layout.height)}`,
    width: Math.ceil(layout.width),
    height: Math.ceil(layout.height),
    role: 'group',
    'aria-label': 'State machine graph',
    class: graph.nodes.length <= FIT_NODES ? 'graph fit' : 'graph',
  }) as SVGSVGElement;
  svg.append(
    s(
      'defs',
      {},
      s(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }),
      ),
    ),
  );
  for (const grp of graph.groups) {
    const b = layout.groups.get(grp.id)!;
    svg.append(
      s('rect', {
        x: b.x - b.width / 2,
        y: b.y - b.height / 2,
        width: b.width,
        height: b.height,
        rx: 6,
        class: `group group-${grp.type.toLowerCase()}`,
        'data-group': grp.id,
      }),
    );
  }
  for (const { edge, points } of layout.edges) {
    if (points.length === 0) continue;
    svg.append(
      s('path', { d: `M ${points.map((p) => `${p.x} ${p.y}`).join(' L ')}`, class: `edge edge-${edge.kind}`, 'marker-end': 'url(#arrow)' }),
    );
  }
  const byName = new Map<string, SVGGElement[]>();
  for (const n of graph.nodes) {
    const b = layout.nodes.get(n.id)!;
    const label = s(
      'text',
      { x: b.x, y: b.y + 4, 'text-anchor': 'middle', class: 'label' },
      n.name.length > 34 ? `${n.name.slice(0, 33)}…` : n.name,
    );
    const badge = s('text', { x: b.x + b.width / 2 - 6, y: b.y - b.height / 2 - 4, 'text-anchor': 'end', class: 'badge' });
    const g = s(
      'g',
      { class: 'state', tabindex: 0, role: 'button', 'data-state': n.name, 'data-type': n.type },
      s('title', {}, n.name),
      s('rect', { x: b.x - b.width / 2, y: b.y - b.height / 2, width: b.width, height: b.height, rx: n.type === 'Choice' ? 16 : 4 }),
      label,
      badge,
    ) as SVGGElement;
    g.addEventListener('click', () => onSelect(n.name));
    g.addEventListener('keydown', (ev) => {
      if ((ev as KeyboardEvent).key === 'Enter' || (ev as KeyboardEvent).key === ' ') {
        ev.preventDefault();
        onSelect(n.name);
      }
    });
    byName.set(n.name, [...(byName.get(n.name) ?? []), g]);
    svg.append(g);
  }
  const view: GraphView = {
    element: svg,
    graph,
    layout,
    update(st) {
      for (const [name, gs] of byName) {
        const status = st.status(name);
        const run = st.run(name);
        const it = run?.iterations;
        for (const g of gs) {
          g.setAttribute('data-status', status);
          g.setAttribute(
            'aria-label',
            `${name}: ${STATUS_LABEL[status]}${it ? `, ${it.succeeded} of ${it.started} iterations succeeded` : ''}`,
          );
          const badge = g.querySelector('.badge')!;
          badge.textContent = it ? `${it.succeeded + it.failed}/${it.started} iterations` : run && run.entered > 1 ? `×${run.entered}` : '';
        }
      }
    },
    select(name) {
      for (const [n, gs] of byName) for (const g of gs) g.classList.toggle('selected', n === name);
    },
  };
  view.update(state);
  return view;
}
