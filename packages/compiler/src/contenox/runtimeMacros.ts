// Contenox's macros other than `{{var:…}}` (which expandMacros fills when the chain loads). Contenox
// expands them in a task's prompt_template and system_instruction: `{{date}}`, `{{now}}`,
// `{{chain:id}}`, `{{tools}}` and `{{toolservice:…}}` when the chain starts, `{{edge_count:A->B}}`
// each time the task runs. Anything else in their shape it leaves as written (a Go template action
// such as `{{else}}` looks the same), so only the namespaces it knows are ours to judge.

/** One macro in a string: `{{namespace}}` or `{{namespace:payload}}`, with its position. */
export interface RuntimeMacroUse {
  readonly namespace: string;
  /** The text after `:`, trimmed; absent when none is written. */
  readonly payload?: string;
  readonly start: number;
  readonly end: number;
}

// Contenox's own shape: no space after `{{`, a word, then an optional `:payload` without `}`.
const RUNTIME_MACRO = /\{\{([a-zA-Z0-9_]+)(?::([^}]*))?\}\}/g;

/** The namespaces Contenox expands (besides `var`). */
const NAMESPACES = new Set(['date', 'now', 'chain', 'tools', 'toolservice', 'hookservice', 'host', 'edge_count']);

/** The runtime macros in `text`, in order (`{{var:…}}` and unknown namespaces left out). */
export function findRuntimeMacros(text: string): RuntimeMacroUse[] {
  const out: RuntimeMacroUse[] = [];
  if (!text.includes('{{')) return out;
  for (const m of text.matchAll(RUNTIME_MACRO)) {
    if (!NAMESPACES.has(m[1]!)) continue;
    out.push({
      namespace: m[1]!,
      ...(m[2] !== undefined ? { payload: m[2].trim() } : {}),
      start: m.index!,
      end: m.index! + m[0].length,
    });
  }
  return out;
}

/**
 * Why a macro stays as written here, or undefined when it is expanded. `{{host…}}` names the
 * machine Contenox's engine runs on, which a state machine does not have one of (a step may run in
 * this process or in a Lambda function); the others are payloads Contenox itself leaves as written.
 */
export function unsupportedRuntimeMacro(use: RuntimeMacroUse): string | undefined {
  const p = use.payload;
  switch (use.namespace) {
    case 'date':
    case 'now':
    case 'edge_count':
      return undefined;
    case 'tools':
      return p === undefined || p === '' ? undefined : 'Contenox expands {{tools}} only without a payload';
    case 'chain':
      return p === 'id' ? undefined : 'Contenox knows only {{chain:id}}';
    case 'toolservice': {
      const cmd = (p ?? '').split(' ')[0];
      return cmd === 'list' || cmd === 'tools' ? undefined : 'Contenox knows {{toolservice:list}} and {{toolservice:tools [NAME]}}';
    }
    case 'hookservice':
      return "{{hookservice:…}} is an older Contenox's name for {{toolservice:…}}";
    case 'host':
      return 'a state machine has no one host: a step runs in this process or in a Lambda function';
  }
  return undefined;
}

// Go's layout elements, longest first where one is the start of another, as XPath picture
// components ($fromMillis): Go writes a layout as an example date, JSONata as a picture.
const GO_LAYOUT: readonly (readonly [string, string])[] = [
  ['January', '[MNn]'],
  ['Jan', '[MNn,*-3]'],
  ['Monday', '[FNn]'],
  ['Mon', '[FNn,*-3]'],
  // The time is formatted in UTC (what a Lambda function's clock is), whose zone name is UTC.
  ['MST', 'UTC'],
  ['2006', '[Y0001]'],
  ['Z07:00', '[Z01:01t]'],
  ['Z0700', '[Z0101t]'],
  ['Z07', '[Z01t]'],
  ['-07:00', '[Z01:01]'],
  ['-0700', '[Z0101]'],
  ['-07', '[Z01]'],
  ['.000000000', '.[f000000001]'],
  ['.000000', '.[f000001]'],
  ['.000', '.[f001]'],
  ['002', '[d001]'],
  ['01', '[M01]'],
  ['02', '[D01]'],
  ['_2', '[D1]'],
  ['03', '[h01]'],
  ['04', '[m01]'],
  ['05', '[s01]'],
  ['06', '[Y01]'],
  ['15', '[H01]'],
  ['PM', '[PN]'],
  ['pm', '[P]'],
  ['1', '[M1]'],
  ['2', '[D1]'],
  ['3', '[h1]'],
  ['4', '[m1]'],
  ['5', '[s1]'],
];

/** A Go time layout (`2006-01-02`, RFC 3339's `2006-01-02T15:04:05Z07:00`) as a $fromMillis picture. */
export function goLayoutPicture(layout: string): string {
  let out = '';
  for (let i = 0; i < layout.length;) {
    const hit = GO_LAYOUT.find(([go]) => layout.startsWith(go, i));
    if (hit) {
      out += hit[1];
      i += hit[0].length;
    } else {
      const c = layout[i]!;
      // `[` and `]` are a picture's own; doubled, they are the characters.
      out += c === '[' || c === ']' ? c + c : c;
      i++;
    }
  }
  return out;
}

/** Go's RFC 3339 layout, `{{now}}`'s default. */
export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
/** `{{date}}`'s default, and `{{now}}`'s in a system_instruction (Contenox keeps that text stable for a day). */
export const DATE_LAYOUT = '2006-01-02';
