// JSONPath-mode value resolution: `$…` reads the state input, `$$…` the context object,
// `$name…` a variable; `.$` template fields may also hold intrinsic function calls.
import { compilePath, evaluatePath, JsonPathError } from '../jsonpath/JsonPath.js';
import { evaluateIntrinsic, isIntrinsicCall, parseIntrinsic, IntrinsicSyntaxError, type IntrinsicNode } from '../intrinsics/Intrinsics.js';
import type { ContextObject } from './types.js';
import type { Scope } from './Scope.js';
import { RuntimeFailure } from './StateError.js';

/** What JSONPath expressions can see besides the input. */
export interface PathEnv {
  readonly context: ContextObject;
  readonly scope: Scope;
}

const VAR_RE = /^\$([A-Za-z_][A-Za-z0-9_]*)(.*)$/s;

/** Resolves a path; `found: false` when a definite path misses (with Jayway's reason). */
export function lookupPath(text: string, input: unknown, env: PathEnv): { found: boolean; value: unknown; reason?: string } {
  if (text.startsWith('$$')) return evaluatePath(compilePath(text), env.context);
  const m = text[1] !== '.' && text[1] !== '[' && text.length > 1 ? VAR_RE.exec(text) : null;
  if (m) {
    const name = m[1]!;
    if (!env.scope.has(name)) return { found: false, value: undefined, reason: `The variable '${name}' is not defined` };
    const rest = m[2]!;
    const v = env.scope.get(name);
    if (rest === '') return { found: true, value: v };
    return evaluatePath(compilePath('$' + rest), v);
  }
  return evaluatePath(compilePath(text), input);
}

/** Resolves a path or fails with AWS's "Invalid path" States.Runtime error (InputPath/OutputPath/ItemsPath). */
export function requirePath(text: string, input: unknown, env: PathEnv): unknown {
  let r;
  try {
    r = lookupPath(text, input, env);
  } catch (e) {
    throw new RuntimeFailure('States.Runtime', `Invalid path '${text}' : ${(e as Error).message}`);
  }
  if (!r.found) throw new RuntimeFailure('States.Runtime', `Invalid path '${text}' : ${r.reason ?? 'No results'}`);
  return r.value;
}

/** `.$` values already parsed as intrinsic calls, and those known to be paths (null). */
const dollarValues = new Map<string, IntrinsicNode | null>();

/** The parsed intrinsic call of a `.$` value, or null for a path; a bad call fails as States.Runtime (and is not kept). */
function intrinsicOf(expr: string): IntrinsicNode | null {
  let node = dollarValues.get(expr);
  if (node !== undefined) return node;
  if (!isIntrinsicCall(expr)) node = null;
  else {
    try {
      node = parseIntrinsic(expr);
    } catch (e) {
      if (e instanceof IntrinsicSyntaxError) throw new RuntimeFailure('States.Runtime', e.message);
      throw e;
    }
  }
  if (dollarValues.size > 10_000) dollarValues.clear();
  dollarValues.set(expr, node);
  return node;
}

/** Resolves a `.$` field value (path or intrinsic) as a Parameters/ResultSelector/Assign entry. */
export function resolveDollarField(expr: string, field: string, input: unknown, env: PathEnv): unknown {
  const node = intrinsicOf(expr);
  if (node !== null) {
    return evaluateIntrinsic(node, (p) => {
      const r = lookupPathSafe(p, input, env);
      if (!r.found) {
        throw new RuntimeFailure(
          'States.Runtime',
          `The JSONPath '${p}' specified for the field '${field}' could not be found in the input '${JSON.stringify(p.startsWith('$$') ? env.context : input)}'`,
        );
      }
      return r.value;
    });
  }
  const r = lookupPathSafe(expr, input, env);
  if (!r.found) {
    throw new RuntimeFailure(
      'States.Runtime',
      `The JSONPath '${expr}' specified for the field '${field}' could not be found in the input '${JSON.stringify(expr.startsWith('$$') ? env.context : input)}'`,
    );
  }
  return r.value;
}

function lookupPathSafe(text: string, input: unknown, env: PathEnv) {
  try {
    return lookupPath(text, input, env);
  } catch (e) {
    if (e instanceof JsonPathError) throw new RuntimeFailure('States.Runtime', e.message);
    throw e;
  }
}

/** Evaluates a JSONPath payload template (Parameters, ResultSelector, ItemSelector, Assign). */
export function evaluatePayloadTemplate(tpl: unknown, input: unknown, env: PathEnv): unknown {
  if (Array.isArray(tpl)) return tpl.map((x) => evaluatePayloadTemplate(x, input, env));
  if (tpl === null || typeof tpl !== 'object') return tpl;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(tpl)) {
    const v = (tpl as Record<string, unknown>)[key];
    if (key.endsWith('.$') && typeof v === 'string') {
      out[key.slice(0, -2)] = resolveDollarField(v, key, input, env);
    } else {
      out[key] = evaluatePayloadTemplate(v, input, env);
    }
  }
  return out;
}
