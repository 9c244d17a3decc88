// Checks an ASL definition before any run, returning every problem with an AWS-style code and a
// JSON-pointer location (like CreateStateMachine's InvalidDefinition), rather than throwing midway.
import { isValidPath, isReferencePath } from '../jsonpath/JsonPath.js';
import { isIntrinsicCall, parseIntrinsic } from '../intrinsics/Intrinsics.js';
import { compileJsonata, jsonataBody } from '../jsonata/JsonataEvaluator.js';
import { CHOICE_OPERATORS } from './choiceRules.js';
import type { DefinitionError, QueryLanguage } from './types.js';

/** A JSONPath, or a variable reference such as `$name.field` (JSONPath states may read variables). */
function isPathOrVariable(text: string): boolean {
  const m = /^\$([A-Za-z_][A-Za-z0-9_]*)(.*)$/s.exec(text);
  return m ? isValidPath('$' + m[2]) : isValidPath(text);
}

type Obj = Record<string, unknown>;

const STATE_TYPES = new Set(['Pass', 'Task', 'Choice', 'Wait', 'Succeed', 'Fail', 'Parallel', 'Map']);
const COMMON = ['Type', 'Comment', 'QueryLanguage'];
const JSONPATH_IO = ['InputPath', 'OutputPath'];
const FIELDS: Record<string, { jsonpath: string[]; jsonata: string[] }> = {
  Pass: {
    jsonpath: [...JSONPATH_IO, 'Parameters', 'Result', 'ResultPath', 'Next', 'End', 'Assign'],
    jsonata: ['Output', 'Next', 'End', 'Assign'],
  },
  Task: {
    jsonpath: [
      ...JSONPATH_IO,
      'Resource',
      'Parameters',
      'ResultSelector',
      'ResultPath',
      'Next',
      'End',
      'Retry',
      'Catch',
      'TimeoutSeconds',
      'TimeoutSecondsPath',
      'HeartbeatSeconds',
      'HeartbeatSecondsPath',
      'Credentials',
      'Assign',
    ],
    jsonata: [
      'Resource',
      'Arguments',
      'Output',
      'Next',
      'End',
      'Retry',
      'Catch',
      'TimeoutSeconds',
      'HeartbeatSeconds',
      'Credentials',
      'Assign',
    ],
  },
  Choice: { jsonpath: [...JSONPATH_IO, 'Choices', 'Default', 'Assign'], jsonata: ['Choices', 'Default', 'Output', 'Assign'] },
  Wait: {
    jsonpath: [...JSONPATH_IO, 'Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath', 'Next', 'End', 'Assign'],
    jsonata: ['Seconds', 'Timestamp', 'Output', 'Next', 'End', 'Assign'],
  },
  Succeed: { jsonpath: [...JSONPATH_IO], jsonata: ['Output'] },
  Fail: { jsonpath: ['Error', 'ErrorPath', 'Cause', 'CausePath'], jsonata: ['Error', 'Cause'] },
  Parallel: {
    jsonpath: [...JSONPATH_IO, 'Branches', 'Parameters', 'ResultSelector', 'ResultPath', 'Next', 'End', 'Retry', 'Catch', 'Assign'],
    jsonata: ['Branches', 'Arguments', 'Output', 'Next', 'End', 'Retry', 'Catch', 'Assign'],
  },
  Map: {
    jsonpath: [
      ...JSONPATH_IO,
      'ItemsPath',
      'ItemSelector',
      'Parameters',
      'ItemProcessor',
      'Iterator',
      'ItemReader',
      'ResultWriter',
      'ItemBatcher',
      'Label',
      'MaxConcurrency',
      'MaxConcurrencyPath',
      'ToleratedFailureCount',
      'ToleratedFailureCountPath',
      'ToleratedFailurePercentage',
      'ToleratedFailurePercentagePath',
      'ResultSelector',
      'ResultPath',
      'Next',
      'End',
      'Retry',
      'Catch',
      'Assign',
    ],
    jsonata: [
      'Items',
      'ItemSelector',
      'ItemProcessor',
      'Iterator',
      'ItemReader',
      'ResultWriter',
      'ItemBatcher',
      'Label',
      'MaxConcurrency',
      'ToleratedFailureCount',
      'ToleratedFailurePercentage',
      'Output',
      'Next',
      'End',
      'Retry',
      'Catch',
      'Assign',
    ],
  },
};

/** Returns every reason the definition would be rejected (empty when it is valid). */
export function validateDefinition(definition: unknown): DefinitionError[] {
  const errors: DefinitionError[] = [];
  const add = (code: string, message: string, path: string) => {
    if (errors.length < 100) errors.push({ code, message, path });
  };
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    add('INVALID_JSON_DESCRIPTION', 'The definition must be a JSON object', '/');
    return errors;
  }
  const def = definition as Obj;
  const ql = def.QueryLanguage ?? 'JSONPath';
  if (ql !== 'JSONPath' && ql !== 'JSONata')
    add('SCHEMA_VALIDATION_FAILED', `Value is not a valid query language: ${show(ql)}`, '/QueryLanguage');
  if (def.TimeoutSeconds !== undefined && (typeof def.TimeoutSeconds !== 'number' || def.TimeoutSeconds <= 0)) {
    add('SCHEMA_VALIDATION_FAILED', 'TimeoutSeconds must be a positive integer', '/TimeoutSeconds');
  }
  checkMachine(def, '', asQl(ql, 'JSONPath'), add);
  return errors;
}

const validated = new WeakSet<object>();

/**
 * Records that `definition` passed validateDefinition before it was parsed into this object (a
 * state machine's stored definition, checked when it was created or updated), so that running it
 * does not check it again: Step Functions checks a definition when it is stored, not at each
 * StartExecution, and the check parses every JSONata expression in it.
 */
export function markValidDefinition(definition: object): void {
  validated.add(definition);
}

/** Throws an error named `InvalidDefinition` (with `errors`) when the definition is invalid. */
export function assertValidDefinition(definition: unknown): void {
  // Definitions are treated as immutable once run, so each object is validated once.
  if (typeof definition === 'object' && definition !== null && validated.has(definition)) return;
  const errors = validateDefinition(definition);
  if (errors.length === 0 && typeof definition === 'object' && definition !== null) validated.add(definition);
  if (errors.length === 0) return;
  const e = new Error(`Invalid State Machine Definition: ${errors.map((x) => `'${x.code}: ${x.message} at ${x.path}'`).join(', ')}`);
  e.name = 'InvalidDefinition';
  (e as Error & { errors: DefinitionError[] }).errors = errors;
  throw e;
}

type Add = (code: string, message: string, path: string) => void;

/** Safe text for any value in a message (objects without a prototype cannot be String()-ed). */
function show(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '[unprintable]';
  }
}

/** A valid query language, or the inherited one (an invalid value is reported separately). */
const asQl = (v: unknown, inherited: QueryLanguage): QueryLanguage => (v === 'JSONata' || v === 'JSONPath' ? v : inherited);

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkMachine(m: Obj, at: string, ql: QueryLanguage, add: Add): void {
  const states = m.States;
  if (typeof m.StartAt !== 'string') add('SCHEMA_VALIDATION_FAILED', 'The field "StartAt" is required', `${at}/StartAt`);
  if (states === null || typeof states !== 'object' || Array.isArray(states) || Object.keys(states).length === 0) {
    add('SCHEMA_VALIDATION_FAILED', 'The field "States" must be a non-empty object', `${at}/States`);
    return;
  }
  const names = new Set(Object.keys(states));
  if (typeof m.StartAt === 'string' && !names.has(m.StartAt))
    add('MISSING_TRANSITION_TARGET', `Missing 'StartAt' target: ${m.StartAt}`, `${at}/StartAt`);
  const target = (t: unknown, path: string, field: string) => {
    if (typeof t !== 'string' || !names.has(t)) add('MISSING_TRANSITION_TARGET', `Missing '${field}' target: ${show(t)}`, path);
  };
  for (const [name, s] of Object.entries(states as Obj)) {
    const p = `${at}/States/${name}`;
    if (name.length > 80) add('SCHEMA_VALIDATION_FAILED', `State name is longer than 80 characters`, p);
    if (s === null || typeof s !== 'object') {
      add('SCHEMA_VALIDATION_FAILED', 'A state must be an object', p);
      continue;
    }
    const st = s as Obj;
    const type = st.Type as string;
    if (!STATE_TYPES.has(type)) {
      add('SCHEMA_VALIDATION_FAILED', `Value is not a valid state type: ${show(type)}`, `${p}/Type`);
      continue;
    }
    const sql = asQl(st.QueryLanguage, ql);
    if (st.QueryLanguage !== undefined && st.QueryLanguage !== 'JSONPath' && st.QueryLanguage !== 'JSONata') {
      add('SCHEMA_VALIDATION_FAILED', `Value is not a valid query language: ${show(st.QueryLanguage)}`, `${p}/QueryLanguage`);
    }
    if (ql === 'JSONata' && st.QueryLanguage === 'JSONPath') {
      add('SCHEMA_VALIDATION_FAILED', 'A state cannot use JSONPath when the state machine uses JSONata', `${p}/QueryLanguage`);
    }
    const allowed = new Set([...COMMON, ...(sql === 'JSONata' ? FIELDS[type]!.jsonata : FIELDS[type]!.jsonpath)]);
    for (const k of Object.keys(st)) {
      if (!allowed.has(k)) add('SCHEMA_VALIDATION_FAILED', `These fields are not allowed for a ${sql} ${type} state: [${k}]`, `${p}/${k}`);
    }
    if (['Pass', 'Task', 'Wait', 'Parallel', 'Map'].includes(type)) {
      if (st.End === true && st.Next !== undefined) add('SCHEMA_VALIDATION_FAILED', "A state cannot have both 'Next' and 'End'", p);
      else if (st.End !== true) {
        if (st.Next === undefined) add('MISSING_TRANSITION_TARGET', "A state must have either 'Next' or 'End': true", p);
        else target(st.Next, `${p}/Next`, 'Next');
      }
    }
    if (sql === 'JSONPath') {
      for (const f of [
        'InputPath',
        'OutputPath',
        'ItemsPath',
        'SecondsPath',
        'TimestampPath',
        'TimeoutSecondsPath',
        'HeartbeatSecondsPath',
        'MaxConcurrencyPath',
        'ToleratedFailureCountPath',
        'ToleratedFailurePercentagePath',
      ]) {
        const v = st[f];
        if (v !== undefined && v !== null && (typeof v !== 'string' || !isPathOrVariable(v)))
          add('INVALID_JSONPATH', `Invalid JSONPath: ${show(v)}`, `${p}/${f}`);
      }
      if (st.ResultPath !== undefined && st.ResultPath !== null && (typeof st.ResultPath !== 'string' || !isReferencePath(st.ResultPath))) {
        add('INVALID_JSONPATH', `Invalid ResultPath: ${show(st.ResultPath)}`, `${p}/ResultPath`);
      }
      for (const f of ['Parameters', 'ResultSelector', 'ItemSelector', 'Assign'])
        if (st[f] !== undefined) checkTemplate(st[f], `${p}/${f}`, add);
    } else {
      for (const f of [
        'Arguments',
        'Output',
        'Assign',
        'Items',
        'ItemSelector',
        'TimeoutSeconds',
        'HeartbeatSeconds',
        'Seconds',
        'Timestamp',
        'Error',
        'Cause',
        'MaxConcurrency',
        'ToleratedFailureCount',
        'ToleratedFailurePercentage',
      ]) {
        if (st[f] !== undefined) checkJsonata(st[f], `${p}/${f}`, add);
      }
    }
    if (type === 'Task') {
      if (typeof st.Resource !== 'string') add('SCHEMA_VALIDATION_FAILED', 'The field "Resource" is required', `${p}/Resource`);
      if (st.TimeoutSeconds !== undefined && st.TimeoutSecondsPath !== undefined)
        add('SCHEMA_VALIDATION_FAILED', 'TimeoutSeconds and TimeoutSecondsPath are mutually exclusive', p);
      if (st.HeartbeatSeconds !== undefined && st.HeartbeatSecondsPath !== undefined)
        add('SCHEMA_VALIDATION_FAILED', 'HeartbeatSeconds and HeartbeatSecondsPath are mutually exclusive', p);
      if (typeof st.TimeoutSeconds === 'number' && (!Number.isInteger(st.TimeoutSeconds) || st.TimeoutSeconds <= 0))
        add('SCHEMA_VALIDATION_FAILED', 'TimeoutSeconds must be a positive integer', `${p}/TimeoutSeconds`);
      if (typeof st.HeartbeatSeconds === 'number' && (!Number.isInteger(st.HeartbeatSeconds) || st.HeartbeatSeconds <= 0))
        add('SCHEMA_VALIDATION_FAILED', 'HeartbeatSeconds must be a positive integer', `${p}/HeartbeatSeconds`);
    }
    if (type === 'Choice') {
      if (!Array.isArray(st.Choices) || st.Choices.length === 0)
        add('SCHEMA_VALIDATION_FAILED', 'The field "Choices" must be a non-empty array', `${p}/Choices`);
      else
        (st.Choices as unknown[]).forEach((c0, i) => {
          if (!isObj(c0)) return add('SCHEMA_VALIDATION_FAILED', 'A choice rule must be an object', `${p}/Choices/${i}`);
          const c = c0;
          target(c.Next, `${p}/Choices/${i}/Next`, 'Next');
          if (sql === 'JSONPath') checkRule(c, `${p}/Choices/${i}`, add, true);
          else if (c.Condition === undefined) add('SCHEMA_VALIDATION_FAILED', 'The field "Condition" is required', `${p}/Choices/${i}`);
        });
      if (st.Default !== undefined) target(st.Default, `${p}/Default`, 'Default');
    }
    if (type === 'Wait') {
      const n = ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'].filter((f) => st[f] !== undefined).length;
      if (n !== 1) add('SCHEMA_VALIDATION_FAILED', 'A Wait state needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath', p);
    }
    if (type === 'Parallel') {
      if (!Array.isArray(st.Branches) || st.Branches.length === 0)
        add('SCHEMA_VALIDATION_FAILED', 'The field "Branches" must be a non-empty array', `${p}/Branches`);
      else
        (st.Branches as unknown[]).forEach((b, i) =>
          isObj(b)
            ? checkMachine(b, `${p}/Branches/${i}`, asQl(b.QueryLanguage, sql), add)
            : add('SCHEMA_VALIDATION_FAILED', 'A branch must be an object', `${p}/Branches/${i}`),
        );
    }
    if (type === 'Map') {
      const proc = (st.ItemProcessor ?? st.Iterator) as Obj | undefined;
      if (!isObj(proc)) add('SCHEMA_VALIDATION_FAILED', 'The field "ItemProcessor" is required', `${p}/ItemProcessor`);
      else checkMachine(proc, `${p}/${st.ItemProcessor ? 'ItemProcessor' : 'Iterator'}`, asQl(proc.QueryLanguage, sql), add);
      if (st.ItemReader !== undefined)
        add('UNSUPPORTED_FEATURE', 'ItemReader (distributed Map over S3) is not supported by the embedded engine', `${p}/ItemReader`);
    }
    for (const key of ['Retry', 'Catch'] as const) {
      const list = st[key];
      if (list === undefined) continue;
      if (!Array.isArray(list)) {
        add('SCHEMA_VALIDATION_FAILED', `The field "${key}" must be an array`, `${p}/${key}`);
        continue;
      }
      (list as unknown[]).forEach((r0, i) => {
        if (!isObj(r0)) return add('SCHEMA_VALIDATION_FAILED', `Each ${key} entry must be an object`, `${p}/${key}/${i}`);
        const r = r0;
        if (!Array.isArray(r.ErrorEquals) || r.ErrorEquals.length === 0)
          add('SCHEMA_VALIDATION_FAILED', 'The field "ErrorEquals" must be a non-empty array', `${p}/${key}/${i}/ErrorEquals`);
        else if ((r.ErrorEquals as unknown[]).includes('States.ALL') && (r.ErrorEquals as unknown[]).length > 1) {
          add('SCHEMA_VALIDATION_FAILED', 'States.ALL must appear alone in ErrorEquals', `${p}/${key}/${i}/ErrorEquals`);
        }
        if (key === 'Catch') target(r.Next, `${p}/Catch/${i}/Next`, 'Next');
        if (key === 'Retry') {
          if (r.MaxAttempts !== undefined && (typeof r.MaxAttempts !== 'number' || r.MaxAttempts < 0))
            add('SCHEMA_VALIDATION_FAILED', 'MaxAttempts must be a non-negative integer', `${p}/Retry/${i}/MaxAttempts`);
          if (r.BackoffRate !== undefined && (typeof r.BackoffRate !== 'number' || r.BackoffRate < 1))
            add('SCHEMA_VALIDATION_FAILED', 'BackoffRate must be at least 1.0', `${p}/Retry/${i}/BackoffRate`);
          if (r.JitterStrategy !== undefined && r.JitterStrategy !== 'FULL' && r.JitterStrategy !== 'NONE')
            add('SCHEMA_VALIDATION_FAILED', 'JitterStrategy must be FULL or NONE', `${p}/Retry/${i}/JitterStrategy`);
        }
      });
    }
  }
}

function checkRule(rule: unknown, p: string, add: Add, top: boolean): void {
  if (!isObj(rule)) return add('SCHEMA_VALIDATION_FAILED', 'A choice rule must be an object', p);
  if (Array.isArray(rule.And) || Array.isArray(rule.Or)) {
    const list = (rule.And ?? rule.Or) as unknown[];
    if (list.length === 0) add('SCHEMA_VALIDATION_FAILED', 'And/Or needs at least one rule', p);
    list.forEach((r, i) => checkRule(r, `${p}/${rule.And ? 'And' : 'Or'}/${i}`, add, false));
    return;
  }
  if (rule.Not !== undefined) return checkRule(rule.Not, `${p}/Not`, add, false);
  const ops = Object.keys(rule).filter((k) => CHOICE_OPERATORS.has(k));
  if (ops.length !== 1) add('SCHEMA_VALIDATION_FAILED', 'A choice rule needs exactly one comparison operator', p);
  if (
    typeof rule.Variable !== 'string' ||
    !isValidPath(
      rule.Variable.startsWith('$') &&
        !rule.Variable.startsWith('$.') &&
        !rule.Variable.startsWith('$$') &&
        !rule.Variable.startsWith('$[') &&
        rule.Variable !== '$'
        ? '$' + rule.Variable.replace(/^\$[A-Za-z_][A-Za-z0-9_]*/, '')
        : rule.Variable,
    )
  ) {
    add('SCHEMA_VALIDATION_FAILED', 'A choice rule needs a valid "Variable" path', `${p}/Variable`);
  }
  void top;
}

function checkTemplate(tpl: unknown, p: string, add: Add): void {
  if (Array.isArray(tpl)) return tpl.forEach((x, i) => checkTemplate(x, `${p}/${i}`, add));
  if (tpl === null || typeof tpl !== 'object') return;
  for (const [k, v] of Object.entries(tpl)) {
    if (k.endsWith('.$')) {
      if (typeof v !== 'string') add('SCHEMA_VALIDATION_FAILED', `The value of ${k} must be a string`, `${p}/${k}`);
      else if (isIntrinsicCall(v)) {
        try {
          parseIntrinsic(v);
        } catch (e) {
          add('SCHEMA_VALIDATION_FAILED', (e as Error).message, `${p}/${k}`);
        }
      } else if (!v.startsWith('$'))
        add('INVALID_JSONPATH', `The value for the field '${k}' must be a valid JSONPath or a valid intrinsic function call`, `${p}/${k}`);
    } else checkTemplate(v, `${p}/${k}`, add);
  }
}

function checkJsonata(v: unknown, p: string, add: Add): void {
  const body = jsonataBody(v);
  if (body !== undefined) {
    try {
      compileJsonata(body);
    } catch (e) {
      add('SCHEMA_VALIDATION_FAILED', `Invalid JSONata expression '${body}': ${(e as Error).message}`, p);
    }
    return;
  }
  if (Array.isArray(v)) v.forEach((x, i) => checkJsonata(x, `${p}/${i}`, add));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) checkJsonata(x, `${p}/${k}`, add);
}
