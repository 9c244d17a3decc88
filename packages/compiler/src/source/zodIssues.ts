import type { z } from 'zod';

/** A zod type name with its article, as a message says it ("a mapping", "an integer"). */
export function article(type: string): string {
  if (type === 'record' || type === 'object') return 'a mapping';
  if (type === 'array') return 'a list';
  if (type === 'int') return 'an integer';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A found value as a message shows it (strings quoted, collections by kind). */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return String(v);
}

// Our own schema messages state what is expected; zod's defaults start with these words and get rephrased.
const ZOD_DEFAULT = /^(Invalid|Too |Unrecognized)/;

/** Whether an issue carries zod's default wording rather than a message of our schema's own. */
export function hasZodDefaultMessage(issue: z.core.$ZodIssue): boolean {
  return ZOD_DEFAULT.test(issue.message);
}

/** What went wrong at one zod issue, phrased as "expected …, got …" for a user-facing message. */
export function describeZodIssue(issue: z.core.$ZodIssue, value: unknown): string {
  const custom = hasZodDefaultMessage(issue) ? undefined : issue.message;
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `missing required field; expected ${article(issue.expected)}`;
      return `expected ${article(issue.expected)}, got ${describeValue(value)}`;
    case 'too_small': {
      if (custom) return `expected ${custom}, got ${describeValue(value)}`;
      const op = issue.inclusive === false ? '>' : '>=';
      if (issue.origin === 'array') return `expected at least ${issue.minimum} item(s)`;
      if (issue.origin === 'string') return `expected at least ${issue.minimum} character(s), got ${describeValue(value)}`;
      return `expected ${Number.isInteger(value) ? 'an integer' : 'a number'} ${op} ${issue.minimum}, got ${describeValue(value)}`;
    }
    case 'too_big': {
      const op = issue.inclusive === false ? '<' : '<=';
      if (issue.origin === 'array') return `expected at most ${issue.maximum} item(s)`;
      return `expected a value ${op} ${issue.maximum}, got ${describeValue(value)}`;
    }
    case 'invalid_format':
      return `expected ${custom ?? `a ${issue.format}`}, got ${describeValue(value)}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(value)}`;
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      if (Array.isArray(options)) {
        const list = options.map((o) => JSON.stringify(o)).join(', ');
        return value === undefined
          ? `missing required field; expected one of ${list}`
          : `expected one of ${list}, got ${describeValue(value)}`;
      }
      return `expected ${custom ?? 'a different value'}, got ${describeValue(value)}`;
    }
    case 'unrecognized_keys':
      return `unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    default:
      return custom ?? issue.message;
  }
}

/** The value a zod issue's path points at in what was parsed (undefined where the path runs out). */
export function valueAtPath(value: unknown, path: readonly PropertyKey[]): unknown {
  let got = value;
  for (const p of path) got = got !== null && typeof got === 'object' ? (got as Record<PropertyKey, unknown>)[p] : undefined;
  return got;
}

/**
 * The object schema that a zod issue's path points at inside `schema` (through optional and default
 * wrappers, list items and record values), for listing the fields it has; undefined when none is there.
 */
export function zodObjectAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodObject | undefined {
  let s = unwrap(schema);
  for (const seg of path) {
    const def = s.def as { type: string; element?: z.ZodType; valueType?: z.ZodType };
    if (def.type === 'object') {
      const field = (s as z.ZodObject).shape[seg as string];
      if (field === undefined) return undefined;
      s = unwrap(field as z.ZodType);
    } else if (def.type === 'array' && def.element) s = unwrap(def.element);
    else if (def.type === 'record' && def.valueType) s = unwrap(def.valueType);
    else return undefined;
  }
  return s.def.type === 'object' ? (s as z.ZodObject) : undefined;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  // `.optional()` and `.default()` wrap the schema that has the fields.
  while (s.def.type === 'optional' || s.def.type === 'default') s = (s.def as unknown as { innerType: z.ZodType }).innerType;
  return s;
}
