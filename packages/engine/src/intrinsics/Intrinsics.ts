// The 18 Step Functions intrinsic functions (`States.Format(...)` etc.) for JSONPath states:
// a small recursive-descent parser (cached per expression) and an evaluator.
import { createHash, randomUUID } from 'node:crypto';
import { TaskFailure } from '../interpreter/TaskFailure.js';

/** Parsed intrinsic argument. */
export type IntrinsicNode =
  | { readonly k: 'lit'; readonly value: unknown }
  | { readonly k: 'path'; readonly path: string }
  | { readonly k: 'call'; readonly name: string; readonly args: readonly IntrinsicNode[] };

/** Resolves a `$…`/`$$…` path argument (input, context or variable) to a value. */
export type PathResolver = (path: string) => unknown;

const FUNCTIONS = new Set([
  'States.Format',
  'States.StringToJson',
  'States.JsonToString',
  'States.Array',
  'States.ArrayPartition',
  'States.ArrayContains',
  'States.ArrayRange',
  'States.ArrayGetItem',
  'States.ArrayLength',
  'States.ArrayUnique',
  'States.Base64Encode',
  'States.Base64Decode',
  'States.Hash',
  'States.JsonMerge',
  'States.MathRandom',
  'States.MathAdd',
  'States.StringSplit',
  'States.UUID',
]);

/** True when a string is an intrinsic function call (starts with `States.<Name>(`). */
export function isIntrinsicCall(text: string): boolean {
  return /^\s*States\.[A-Za-z0-9]+\s*\(/.test(text);
}

const cache = new Map<string, IntrinsicNode>();

/** Parses (and caches) an intrinsic call; throws TaskFailure('States.Runtime') on bad syntax. */
export function parseIntrinsic(text: string): IntrinsicNode {
  let node = cache.get(text);
  if (node) return node;
  let i = 0;
  const n = text.length;
  const fail = (why: string): never => {
    throw new IntrinsicSyntaxError(`Invalid intrinsic function '${text}': ${why}`);
  };
  const ws = () => {
    while (i < n && /\s/.test(text[i]!)) i++;
  };
  const parseArg = (): IntrinsicNode => {
    ws();
    const c = text[i];
    if (c === "'") {
      i++;
      let s = '';
      while (i < n && text[i] !== "'") {
        if (text[i] === '\\' && i + 1 < n) {
          const e = text[i + 1]!;
          s += e;
          i += 2;
        } else s += text[i++];
      }
      if (i >= n) fail('unterminated string');
      i++;
      return { k: 'lit', value: s };
    }
    if (c === '$') {
      const s = i;
      let depth = 0;
      let quote: string | null = null;
      while (i < n) {
        const ch = text[i]!;
        if (quote) {
          if (ch === quote) quote = null;
        } else if (ch === "'" || ch === '"') quote = ch;
        else if (ch === '[' || ch === '(') depth++;
        else if (ch === ']' || ch === ')') {
          if (depth === 0) break;
          depth--;
        } else if (ch === ',' && depth === 0) break;
        i++;
      }
      return { k: 'path', path: text.slice(s, i).trim() };
    }
    if (text.startsWith('States.', i)) return parseCall();
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i));
    if (m) {
      i += m[0].length;
      return { k: 'lit', value: JSON.parse(m[0]) };
    }
    return fail(`unexpected '${c ?? 'end'}' at ${i}`);
  };
  const parseCall = (): IntrinsicNode => {
    ws();
    const m = /^States\.[A-Za-z0-9]+/.exec(text.slice(i));
    if (!m) fail('expected States.<Function>');
    const name = m![0];
    if (!FUNCTIONS.has(name)) fail(`unknown function ${name}`);
    i += name.length;
    ws();
    if (text[i] !== '(') fail('expected (');
    i++;
    const args: IntrinsicNode[] = [];
    ws();
    if (text[i] === ')') {
      i++;
      return { k: 'call', name, args };
    }
    for (;;) {
      args.push(parseArg());
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ')') {
        i++;
        break;
      }
      fail(`expected , or ) at ${i}`);
    }
    return { k: 'call', name, args };
  };
  node = parseCall();
  ws();
  if (i < n) fail(`trailing text at ${i}`);
  cache.set(text, node);
  return node;
}

/** Syntax error in an intrinsic call (a definition error). */
export class IntrinsicSyntaxError extends Error {
  override readonly name = 'IntrinsicSyntaxError';
}

const runtime = (msg: string): never => {
  throw new TaskFailure('States.Runtime', msg);
};
const intrinsicFailure = (msg: string): never => {
  throw new TaskFailure('States.IntrinsicFailure', msg);
};

/** Evaluates a parsed intrinsic call. */
export function evaluateIntrinsic(node: IntrinsicNode, resolve: PathResolver): unknown {
  if (node.k === 'lit') return node.value;
  if (node.k === 'path') return resolve(node.path);
  const a = node.args.map((x) => evaluateIntrinsic(x, resolve));
  return callIntrinsic(node.name, a);
}

function argCount(name: string, a: unknown[], min: number, max = min): void {
  if (a.length < min || a.length > max)
    intrinsicFailure(`Function ${name} expects ${min === max ? min : `${min} to ${max}`} argument(s), got ${a.length}.`);
}

function num(name: string, v: unknown): number {
  if (typeof v !== 'number') intrinsicFailure(`Function ${name} expects a number, got ${JSON.stringify(v)}.`);
  return v as number;
}

function str(name: string, v: unknown): string {
  if (typeof v !== 'string') intrinsicFailure(`Function ${name} expects a string, got ${JSON.stringify(v)}.`);
  return v as string;
}

function arr(name: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) intrinsicFailure(`Function ${name} expects an array, got ${JSON.stringify(v)}.`);
  return v as unknown[];
}

/** Java-style toString used by States.Format for non-string arguments (`{a=1, b=[x, y]}`). */
export function javaString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(javaString).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}=${javaString(x)}`)
    .join(', ')}}`;
}

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** Calls one intrinsic by name with evaluated arguments. */
export function callIntrinsic(name: string, a: unknown[]): unknown {
  switch (name) {
    case 'States.Format': {
      if (a.length < 1) intrinsicFailure('Function States.Format expects at least 1 argument.');
      const fmt = str(name, a[0]);
      let k = 1;
      let out = '';
      for (let j = 0; j < fmt.length; j++) {
        if (fmt[j] === '{' && fmt[j + 1] === '}') {
          if (k >= a.length) intrinsicFailure('Function States.Format has more placeholders than arguments.');
          out += javaString(a[k++]);
          j++;
        } else out += fmt[j];
      }
      return out;
    }
    case 'States.StringToJson': {
      argCount(name, a, 1);
      const s = str(name, a[0]).trim();
      if (s === '') return null;
      try {
        return JSON.parse(s);
      } catch {
        return intrinsicFailure(`Function States.StringToJson could not parse: ${s}`);
      }
    }
    case 'States.JsonToString':
      argCount(name, a, 1);
      return JSON.stringify(a[0]);
    case 'States.Array':
      return a;
    case 'States.ArrayPartition': {
      argCount(name, a, 2);
      const xs = arr(name, a[0]);
      const size = num(name, a[1]);
      if (!Number.isInteger(size) || size <= 0)
        intrinsicFailure(`Function States.ArrayPartition chunk size must be a positive integer, got ${size}.`);
      const out: unknown[][] = [];
      for (let j = 0; j < xs.length; j += size) out.push(xs.slice(j, j + size));
      return out;
    }
    case 'States.ArrayContains': {
      argCount(name, a, 2);
      const xs = arr(name, a[0]);
      const needle = canonical(a[1]);
      return xs.some((x) => canonical(x) === needle);
    }
    case 'States.ArrayRange': {
      argCount(name, a, 3);
      const [s, e, st] = [num(name, a[0]), num(name, a[1]), num(name, a[2])];
      if (st === 0) intrinsicFailure('Function States.ArrayRange step cannot be 0.');
      const out: number[] = [];
      for (let x = s; st > 0 ? x <= e : x >= e; x += st) {
        out.push(x);
        if (out.length > 1000) intrinsicFailure('Function States.ArrayRange result exceeds 1000 items.');
      }
      return out;
    }
    case 'States.ArrayGetItem': {
      argCount(name, a, 2);
      const xs = arr(name, a[0]);
      const idx = num(name, a[1]);
      if (!Number.isInteger(idx) || idx < 0 || idx >= xs.length)
        intrinsicFailure(`Function States.ArrayGetItem index ${idx} is out of bounds.`);
      return xs[idx];
    }
    case 'States.ArrayLength':
      argCount(name, a, 1);
      return arr(name, a[0]).length;
    case 'States.ArrayUnique': {
      argCount(name, a, 1);
      const seen = new Set<string>();
      const out: unknown[] = [];
      for (const x of arr(name, a[0])) {
        const key = canonical(x);
        if (!seen.has(key)) {
          seen.add(key);
          out.push(x);
        }
      }
      return out;
    }
    case 'States.Base64Encode': {
      argCount(name, a, 1);
      const s = str(name, a[0]);
      if (s.length > 10_000) intrinsicFailure('Function States.Base64Encode input exceeds 10000 characters.');
      return Buffer.from(s, 'utf8').toString('base64');
    }
    case 'States.Base64Decode': {
      argCount(name, a, 1);
      const s = str(name, a[0]);
      if (s.length > 10_000) intrinsicFailure('Function States.Base64Decode input exceeds 10000 characters.');
      return Buffer.from(s, 'base64').toString('utf8');
    }
    case 'States.Hash': {
      argCount(name, a, 2);
      const data = a[0] === null ? 'null' : typeof a[0] === 'string' ? a[0] : JSON.stringify(a[0]);
      const alg = str(name, a[1]);
      const map: Record<string, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
      const algo = map[alg];
      if (!algo) return intrinsicFailure(`Function States.Hash does not support the algorithm ${alg}.`);
      return createHash(algo).update(data).digest('hex');
    }
    case 'States.JsonMerge': {
      argCount(name, a, 3);
      const [x, y, deep] = a;
      if (x === null || typeof x !== 'object' || Array.isArray(x) || y === null || typeof y !== 'object' || Array.isArray(y)) {
        intrinsicFailure('Function States.JsonMerge expects two JSON objects.');
      }
      if (deep !== false) intrinsicFailure('Function States.JsonMerge only supports a shallow merge (false).');
      return { ...(x as object), ...(y as object) };
    }
    case 'States.MathRandom': {
      argCount(name, a, 2, 3);
      const lo = num(name, a[0]);
      const hi = num(name, a[1]);
      const lo2 = Math.ceil(lo);
      const hi2 = Math.floor(hi);
      return lo2 + Math.floor(Math.random() * Math.max(1, hi2 - lo2));
    }
    case 'States.MathAdd': {
      argCount(name, a, 2);
      return Math.round(num(name, a[0])) + Math.round(num(name, a[1]));
    }
    case 'States.StringSplit': {
      argCount(name, a, 2);
      const s = str(name, a[0]);
      const d = str(name, a[1]);
      const delims = new Set(d);
      const out: string[] = [];
      let cur = '';
      for (const ch of s) {
        if (delims.has(ch)) {
          if (cur !== '') out.push(cur);
          cur = '';
        } else cur += ch;
      }
      if (cur !== '') out.push(cur);
      return out;
    }
    case 'States.UUID':
      argCount(name, a, 0);
      return randomUUID();
    default:
      return runtime(`Unknown intrinsic function ${name}`);
  }
}
