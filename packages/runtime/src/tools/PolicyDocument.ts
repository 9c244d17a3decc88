import { SourceText, StepforgeError, jsonErrorOffset, type SourceLocation } from '@stepforge/contract';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { hitlPolicyRules } from './hitlPolicy.js';
import { PolicyRule } from './ToolPolicy.js';

/** Where a policy text came from: a file (locations are line:column in it) or an environment variable. */
export type PolicyOrigin = { readonly file: string } | { readonly env: string };

const RULE_SHAPE =
  '[{"name"?: "…", "tool": "<glob>", "args"?: {"<arg>": "<glob>|/regex/"}, "action": "allow"|"deny"|"approve", "timeoutSeconds"?: <seconds>}]';

function originName(origin: PolicyOrigin): string {
  return 'file' in origin ? origin.file : origin.env;
}

/**
 * Reads an approval policy: a JSON array of rules, or a Contenox HITL policy (hitl-policy-v1, see
 * hitlPolicyRules). Anything else — text that is not JSON, a document of another shape, a rule with a misspelt or
 * missing field — is `policy_invalid`, naming the origin, the offending field's path and, for a
 * file, its line and column. A policy is never read as "no rules": that would let every gated
 * call through.
 */
export function readPolicyText(text: string, origin: PolicyOrigin): PolicyRule[] {
  const src = new SourceText(text, 'file' in origin ? origin.file : undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    const message = (e as Error).message;
    const offset = jsonErrorOffset(text);
    throw invalid(origin, src, offset, '$', `not valid JSON: ${message.replace(/\s*\(line \d+ column \d+\)$/, '')}`);
  }
  const where = jsonOffsets(text);
  const offsetOf = (path: string): number => where.get(path) ?? 0;
  if (!Array.isArray(parsed)) {
    if (isContenoxHitlPolicy(parsed)) {
      return hitlPolicyRules(parsed as Record<string, unknown>, (path, message) => {
        const p = pathText(path);
        throw invalid(
          origin,
          src,
          where.get(p) ?? offsetOf('$'),
          p,
          message,
          'a Contenox HITL policy (hitl-policy-v1) has "default_action" and ordered "rules" of {tools, tool, when, action, timeout_s, on_timeout}; fix that field, nothing ran',
        );
      });
    }
    throw invalid(
      origin,
      src,
      offsetOf('$'),
      '$',
      `must be a JSON array of policy rules, got ${describe(parsed)}`,
      `write ${RULE_SHAPE}; [] allows every granted call`,
    );
  }
  return parsed.map((raw, i) => {
    const r = PolicyRule.safeParse(raw);
    if (r.success) return r.data;
    // A misspelt field first: the "missing" field it stands for is reported because of it.
    const issue = r.error.issues.find((x) => x.code === 'unrecognized_keys') ?? r.error.issues[0]!;
    const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const fieldPath = [i, ...issue.path, ...(unknownKey !== undefined ? [unknownKey] : [])];
    const path = pathText(fieldPath);
    const offset = where.get(path) ?? where.get(pathText([i, ...issue.path])) ?? offsetOf(pathText([i]));
    const missing =
      unknownKey === undefined && issue.path.length === 1 && raw !== null && typeof raw === 'object' && !(String(issue.path[0]) in raw);
    const message =
      unknownKey !== undefined
        ? `unknown field '${unknownKey}' (a rule has name, tool, args, action and timeoutSeconds)`
        : missing
          ? `missing field '${String(issue.path[0])}'`
          : issue.message;
    throw invalid(origin, src, offset, path, message, `each rule is {"name"?, "tool", "args"?, "action": "allow"|"deny"|"approve"}`);
  });
}

/**
 * Reads the approval policy an environment variable gives (STEPFORGE_POLICY): the policy as JSON
 * text, or a path to a policy file — a value that does not start as JSON does (`[` or `{`) and
 * starts with `/` or `.` or ends in `.json`, read relative to `cwd`. A file that cannot be read, and
 * a value that is neither, are `policy_invalid`: fail closed, never "no rules".
 */
export function readPolicyEnv(value: string, name: string, cwd: string = process.cwd()): PolicyRule[] {
  const v = value.trim();
  if (v.startsWith('[') || v.startsWith('{') || v.charCodeAt(0) === 0xfeff) return readPolicyText(value, { env: name });
  if (v.startsWith('/') || v.startsWith('.') || v.toLowerCase().endsWith('.json')) {
    const file = resolve(cwd, v);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new StepforgeError(
        'policy_invalid',
        `${name} names the policy file ${file}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        {
          hint: `point ${name} at an existing policy file, or put the policy's JSON text in it; nothing ran`,
          details: { origin: name, file },
        },
      );
    }
    return readPolicyText(text, { file });
  }
  throw new StepforgeError(
    'policy_invalid',
    `${name} holds the approval policy as JSON text (a rules array, or a hitl-policy-v1 object) or a path to a policy file, got ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v)}`,
    {
      hint: `write ${name}='[{"tool":"shell","action":"approve"}]', or point it at a file: ${name}=./policy.json (a path starts with / or ., or ends in .json); nothing ran`,
      details: { origin: name },
    },
  );
}

/** A Contenox HITL policy document (hitl-policy-v1): an object with its rules and default action. */
export function isContenoxHitlPolicy(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.$schema === 'string' && /hitl-policy/i.test(o.$schema)) return true;
  return Array.isArray(o.rules) || typeof o.default_action === 'string';
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'object')
    return `an object with ${
      Object.keys(v as object)
        .map((k) => `"${k}"`)
        .join(', ') || 'no fields'
    }`;
  return `a ${typeof v} (${JSON.stringify(v).slice(0, 40)})`;
}

function invalid(origin: PolicyOrigin, src: SourceText, offset: number, path: string, message: string, hint?: string): StepforgeError {
  const name = originName(origin);
  const inFile = 'file' in origin;
  // An environment variable's text has lines and columns too: the caret shows the field in it.
  const location: SourceLocation = { file: name, ...src.position(offset) };
  return new StepforgeError(
    'policy_invalid',
    `${inFile ? 'approval policy' : `${name} (the approval policy)`}: ${path === '$' ? '' : `${path}: `}${message}`,
    {
      location,
      source: src,
      hint: hint ?? `fix ${name}, or remove it; nothing ran`,
      details: { origin: name, path },
    },
  );
}

/** `[0].args.command` style paths. */
function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '$';
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

/**
 * The offset of every value (and of the key, for an object member, so an unknown field points at
 * its name) in a JSON text that JSON.parse accepted, by pathText path.
 */
function jsonOffsets(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n\uFEFF'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: PropertyKey[]): void => {
    ws();
    out.set(pathText(path), i);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const keyAt = i;
        const key = str();
        out.set(pathText([...path, key]), keyAt);
        ws();
        i++; // ':'
        value([...path, key]);
        // The member's own entry points at its key, where an editor shows the field.
        out.set(pathText([...path, key]), keyAt);
        ws();
        if (text[i++] === '}') return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value([...path, n]);
        ws();
        if (text[i++] === ']') return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < text.length && !',]} \t\r\n'.includes(text[i]!)) i++;
  };
  value([]);
  return out;
}
