import type { Expr, PathExpr, Template } from './ExpressionAst.js';

/** Every path in an expression, left to right. */
export function collectPaths(e: Expr, out: PathExpr[] = []): PathExpr[] {
  switch (e.kind) {
    case 'path':
      out.push(e);
      break;
    case 'literal':
      break;
    case 'default':
      collectPaths(e.expr, out);
      break;
    case 'and':
    case 'or':
    case 'compare':
      collectPaths(e.left, out);
      collectPaths(e.right, out);
      break;
  }
  return out;
}

/** Every path in a template, left to right. */
export function templatePaths(t: Template): PathExpr[] {
  const out: PathExpr[] = [];
  for (const p of t.parts) if (p.kind === 'expr') collectPaths(p.expr, out);
  return out;
}

/** The step names a template reads (`steps.<name>.output…`), de-duplicated in first-use order. */
export function templateStepReferences(t: Template): string[] {
  const names: string[] = [];
  for (const p of templatePaths(t)) {
    if (p.root.kind === 'step' && !names.includes(p.root.step)) names.push(p.root.step);
  }
  return names;
}
