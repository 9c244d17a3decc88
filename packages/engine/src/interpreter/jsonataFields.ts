// JSONata-mode field evaluation: walks a template (Arguments, Output, Assign, Items …), evaluates
// every `{% %}` string and reports failures as States.QueryEvaluationError with the field path.
import { evaluateJsonata, FUNCTION_RESULT, JsonataError, jsonataBody } from '../jsonata/JsonataEvaluator.js';
import { RuntimeFailure } from './StateError.js';

/** `$states` plus the variables, as bindings for one evaluation. */
export type JsonataBindings = Record<string, unknown>;

/** Evaluates one `{% %}` expression for a field; undefined results are errors, as in AWS. */
export async function evalField(expr: string, field: string, bindings: JsonataBindings, allowUndefined = false): Promise<unknown> {
  let v: unknown;
  try {
    v = await evaluateJsonata(expr, (bindings.states as { input?: unknown } | undefined)?.input, bindings);
  } catch (e) {
    if (e instanceof JsonataError) {
      const detail =
        e.phase === 'compile'
          ? `The JSONata expression '${expr}' specified for the field '${field}' could not be parsed. ${e.code ?? ''}${e.code ? ': ' : ''}${e.message}`
          : e.code && e.code.startsWith('States.')
            ? e.message
            : `The JSONata expression '${expr}' specified for the field '${field}' threw an error during evaluation. ${e.code ? `${e.code}: ` : ''}${e.message}`;
      throw new RuntimeFailure('States.QueryEvaluationError', detail, field);
    }
    throw e;
  }
  if (v === undefined && !allowUndefined) {
    throw new RuntimeFailure(
      'States.QueryEvaluationError',
      `The JSONata expression '${expr}' specified for the field '${field}' returned nothing (undefined).`,
      field,
    );
  }
  if (v === FUNCTION_RESULT) {
    throw new RuntimeFailure(
      'States.QueryEvaluationError',
      `The JSONata expression '${expr}' specified for the field '${field}' returned an unsupported result type.`,
      field,
    );
  }
  return v;
}

/** Evaluates a JSONata template value (objects and arrays recursively). */
export async function evalTemplate(tpl: unknown, field: string, bindings: JsonataBindings): Promise<unknown> {
  const body = jsonataBody(tpl);
  if (body !== undefined) return evalField(body, field, bindings);
  if (Array.isArray(tpl)) {
    const out: unknown[] = [];
    for (let i = 0; i < tpl.length; i++) out.push(await evalTemplate(tpl[i], `${field}[${i}]`, bindings));
    return out;
  }
  if (tpl !== null && typeof tpl === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(tpl)) out[k] = await evalTemplate((tpl as Record<string, unknown>)[k], `${field}/${k}`, bindings);
    return out;
  }
  return tpl;
}
