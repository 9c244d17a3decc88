// User-facing wording for the zod issues of the DSL schema. zod reports a failed union as one issue
// at the union ("expected a different value") even when the value plainly meant one of its options —
// `{type: strin}` is an input field mapping with a bad `type`, not "not a type name" — so the loader
// first descends into the option the value's shape matches, then phrases each issue as what is
// expected (and, for a misspelt name, what was probably meant) and what was found.
import type { z } from 'zod';
import { article, describeValue, describeZodIssue, hasZodDefaultMessage } from '../source/zodIssues.js';
import { didYouMean } from '@stepforge/contract';
import { INPUT_FIELD_TYPES } from '../input/InputSchema.js';

/**
 * The issues to report: every union whose value matches exactly one option's shape (that option
 * failed only below the top: in a field or an item, or on unknown fields) replaced by that option's
 * issues, with paths from the document root; and no size complaint about a value of the wrong type
 * (zod checks `min(1)` of a string on `[]` too: "expected at least 1 item(s)" after "expected a string").
 */
export function dslIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const flat = flattenUnionIssues(issues, []);
  const wrongType = new Set(flat.filter((i) => i.code === 'invalid_type').map((i) => JSON.stringify(i.path)));
  return flat.filter((i) => !((i.code === 'too_small' || i.code === 'too_big') && wrongType.has(JSON.stringify(i.path))));
}

function flattenUnionIssues(issues: readonly z.core.$ZodIssue[], base: readonly PropertyKey[]): z.core.$ZodIssue[] {
  const out: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union') {
      const matching = issue.errors.filter(
        (option) => option.length > 0 && option.every((i) => i.path.length > 0 || i.code === 'unrecognized_keys'),
      );
      if (matching.length === 1) {
        out.push(...flattenUnionIssues(matching[0]!, path));
        continue;
      }
    }
    out.push({ ...issue, path });
  }
  return out;
}

/** The message for one (flattened) issue about `value`, the data at its path. */
export function describeDslIssue(issue: z.core.$ZodIssue, value: unknown): string {
  if (!hasZodDefaultMessage(issue)) {
    // The schema's own messages: sentences stay as written; "expected …" ones get what was found.
    if (!issue.message.startsWith('expected ') || value === undefined) return issue.message;
    return `${issue.message}, got ${describeValue(value)}${suggestion(issue, value)}`;
  }
  if (value !== undefined) {
    if (issue.code === 'invalid_type' && issue.expected === 'boolean') return `expected true or false, got ${describeValue(value)}`;
    if (issue.code === 'invalid_value') return `expected ${oneOf(issue.values)}, got ${describeValue(value)}${suggestion(issue, value)}`;
    if (issue.code === 'invalid_union') {
      const expected = [...new Set(issue.errors.flatMap((option) => option.filter((i) => i.path.length === 0).map(expectation)))];
      if (expected.length > 0 && !expected.includes(undefined)) {
        // "one of a, b or c, or a mapping": a list inside the list needs its own comma.
        const list = expected.some((e) => e!.includes(' or ')) ? (expected as string[]).join(', or ') : orList(expected as string[]);
        return `expected ${list}, got ${describeValue(value)}${suggestion(issue, value)}`;
      }
    }
  }
  return describeZodIssue(issue, value);
}

/** What one top-level failure of a union option expected, or undefined when it cannot be said shortly. */
function expectation(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code === 'invalid_type') return issue.expected === 'boolean' ? 'true or false' : article(issue.expected);
  if (issue.code === 'invalid_value') return oneOf(issue.values);
  return undefined;
}

/** `one of the types string, number … or any` for input types, else `one of a, b or c`. */
function oneOf(values: readonly unknown[]): string {
  const names = values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const isInputTypes = names.length === INPUT_FIELD_TYPES.length && INPUT_FIELD_TYPES.every((t) => names.includes(t));
  if (names.length === 1) return names[0]!;
  return `one of ${isInputTypes ? 'the types ' : ''}${orList(names)}`;
}

/** "; did you mean 'x'?" when `value` is a string close to one of the names the issue allows. */
function suggestion(issue: z.core.$ZodIssue, value: unknown): string {
  if (typeof value !== 'string') return '';
  const allowed: string[] = [];
  const collect = (i: z.core.$ZodIssue): void => {
    if (i.code === 'invalid_value') for (const v of i.values) if (typeof v === 'string') allowed.push(v);
    if (i.code === 'invalid_union') for (const option of i.errors) for (const j of option) if (j.path.length === 0) collect(j);
  };
  collect(issue);
  const best = didYouMean(value, allowed);
  return best !== undefined && best !== value ? `; did you mean '${best}'?` : '';
}

function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
