import type { Expr, PathRoot, Template } from './ExpressionAst.js';
import { withJsonataHelpers } from './jsonataHelpers.js';

/** Options for translating `${ }` templates to JSONata. */
export interface JsonataOptions {
  /**
   * Maps a path root to a JSONata expression yielding that value unchanged: `{kind:'input'}` → the run
   * input (e.g. `$states.input`), `{kind:'step', step}` → that step's OUTPUT (e.g. `$plan_output`).
   * Avoid path navigation here (`$steps.plan.output`): JSONata paths flatten arrays.
   * Default: input → `$states.input`, step → `$lookup($steps, "<name>")`.
   */
  readonly resolveRoot?: (root: PathRoot) => string;
  /** `value` (default): the template's value. `condition`: its truthiness, a boolean for Choice rules. */
  readonly mode?: 'value' | 'condition';
  /** `inline` (default) binds the helper functions inside the expression; `none` leaves that to the caller. */
  readonly helpers?: 'inline' | 'none';
  /** Wrap the result in `{% … %}` as Step Functions fields expect. */
  readonly wrap?: boolean;
  /**
   * The input root always yields an object (the compiled workflow's `$input`), so its first path
   * step needs no JSON-string or array handling: a plain `$lookup`.
   */
  readonly objectInput?: boolean;
}

/** A plain variable (`$name`), which a whole template's value may read twice. */
const PLAIN_VARIABLE = /^\$[A-Za-z_][A-Za-z0-9_]*$/;

/** The default root layout (see JsonataOptions.resolveRoot). */
export function defaultResolveRoot(root: PathRoot): string {
  return root.kind === 'input' ? '$states.input' : `$lookup($steps, ${JSON.stringify(root.step)})`;
}

/**
 * Translates a parsed template to a JSONata expression that computes exactly what evaluateTemplate
 * computes (proved by the differential test). Requires the `$parse` function Step Functions provides.
 */
export function templateToJsonata(t: Template, options: JsonataOptions = {}): string {
  const tr = new Translator(options.resolveRoot ?? defaultResolveRoot, options.objectInput ?? false);
  let body: string;
  if (t.whole) {
    const inner = tr.expr((t.parts[0] as { expr: Expr }).expr);
    // A plain variable can be read twice; anything else is bound once.
    if (PLAIN_VARIABLE.test(inner)) body = `($exists(${inner}) ? ${inner} : null)`;
    else {
      const v = tr.fresh();
      body = `( ${v} := ${inner}; $exists(${v}) ? ${v} : null )`;
    }
  } else if (t.parts.length === 0) {
    body = '""';
  } else {
    body = t.parts.map((p) => (p.kind === 'text' ? JSON.stringify(p.value) : `$sfStr(${tr.expr(p.expr)})`)).join(' & ');
  }
  if (options.mode === 'condition') body = `$sfTruthy(${body})`;
  if (options.helpers !== 'none') body = withJsonataHelpers(body);
  return options.wrap ? `{% ${body} %}` : body;
}

/** Translates a single expression (the inside of `${ }`) to JSONata; missing stays undefined. */
export function expressionToJsonata(e: Expr, options: Omit<JsonataOptions, 'mode'> = {}): string {
  const body = new Translator(options.resolveRoot ?? defaultResolveRoot, options.objectInput ?? false).expr(e);
  const out = options.helpers !== 'none' ? withJsonataHelpers(body) : body;
  return options.wrap ? `{% ${out} %}` : out;
}

class Translator {
  private n = 0;

  constructor(
    private readonly resolveRoot: (root: PathRoot) => string,
    private readonly objectInput: boolean,
  ) {}

  /** A fresh block variable; unique names keep nested blocks readable and shadowing-free. */
  fresh(): string {
    return `$sfV${this.n++}`;
  }

  expr(e: Expr): string {
    switch (e.kind) {
      case 'literal': {
        const v = e.value;
        if (Array.isArray(v)) return '[]';
        if (v !== null && typeof v === 'object') return '{}';
        if (typeof v === 'number') return v < 0 || Object.is(v, -0) ? `(${JSON.stringify(v)})` : JSON.stringify(v);
        return JSON.stringify(v);
      }
      case 'path': {
        let out = this.resolveRoot(e.root);
        e.segments.forEach((seg, i) => {
          const plain = i === 0 && this.objectInput && e.root.kind === 'input' && typeof seg === 'string';
          out = plain ? `$lookup(${out}, ${JSON.stringify(seg)})` : `$sfStep(${out}, ${JSON.stringify(seg)})`;
        });
        return out;
      }
      case 'default': {
        const v = this.fresh();
        return `( ${v} := ${this.expr(e.expr)}; $exists(${v}) and $type(${v}) != "null" ? ${v} : ${this.expr(e.fallback)} )`;
      }
      case 'or': {
        const v = this.fresh();
        return `( ${v} := ${this.expr(e.left)}; $sfTruthy(${v}) ? ${v} : ${this.expr(e.right)} )`;
      }
      case 'and':
        return `($sfTruthy(${this.expr(e.left)}) ? $sfTruthy(${this.expr(e.right)}) : false)`;
      case 'compare': {
        const l = this.fresh();
        const r = this.fresh();
        const bind = `${l} := ${this.expr(e.left)}; ${r} := ${this.expr(e.right)};`;
        if (e.op === '==') return `( ${bind} $sfEq(${l}, ${r}) )`;
        if (e.op === '!=') return `( ${bind} $not($sfEq(${l}, ${r})) )`;
        return `( ${bind} $sfOrd(${l}, ${r}) ? ${l} ${e.op} ${r} : false )`;
      }
    }
  }
}
