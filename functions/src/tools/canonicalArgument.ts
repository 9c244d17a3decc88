import { posix } from 'node:path';
import { isRuntimeError } from '../errors/RuntimeError.js';
import { parseCommand } from './shellTool.js';

/**
 * What the policy rules are matched against for one argument: its canonical text, or why it has
 * none. `loose` is a wider reading deny and approve rules also match (a command's words joined
 * without their quotes), so they never catch fewer calls than a reader of the rule would expect.
 */
export type CanonicalArgument = { readonly text: string; readonly loose?: string } | { readonly unparseable: string };

/** Facts canonical paths depend on. */
export interface CanonicalContext {
  /** The fs root: paths inside it are written relative to it, paths outside absolute. */
  readonly fsRoot?: string;
}

/** Argument names that always carry a URL (a value there that is not one cannot be matched). */
const URL_KEYS = new Set(['url', 'uri', 'href', 'endpoint']);
/** Argument names that carry a filesystem path. */
const PATH_KEYS = new Set(['path', 'file', 'dir', 'directory']);
const SCHEME = /^\s*[A-Za-z][A-Za-z0-9+.-]*:\/\//;

function decodeFully(text: string): string {
  let out = text;
  // Decoded until stable (a server may decode twice), so `%2576` is matched as `v`, as the most
  // lenient server would read it: a rule against the plain spelling then catches every encoding.
  for (let i = 0; i < 5; i++) {
    let next: string;
    try {
      next = decodeURIComponent(out);
    } catch {
      next = out.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * A URL as a server would read it: lower-case scheme and host (IDN as punycode, no trailing dot, a
 * numeric IPv4 in dotted form), no default port, no credentials or fragment, the path and query
 * percent-decoded, `//` collapsed and dot segments removed (`%2e%2e` included), no trailing `/`.
 */
export function canonicalUrl(raw: string): string {
  const url = new URL(raw.trim());
  const host = url.hostname.replace(/\.$/, '');
  const port = url.port ? `:${url.port}` : '';
  const path = posix.normalize(decodeFully(url.pathname).replace(/\\/g, '/').replace(/\/{2,}/g, '/'));
  const trimmed = path.length > 1 ? path.replace(/\/$/, '') : path;
  const query = url.search ? decodeFully(url.search) : '';
  return `${url.protocol}//${host}${port}${trimmed}${query}`;
}

/** A path as written relative to the fs root when inside it (`./a//b/../c` → `a/c`), absolute otherwise. */
export function canonicalPath(raw: string, ctx: CanonicalContext): string {
  const normal = posix.normalize(raw.replace(/\/{2,}/g, '/'));
  const stripped = normal.length > 1 ? normal.replace(/\/$/, '') : normal;
  if (!ctx.fsRoot) return stripped;
  const root = posix.resolve(ctx.fsRoot);
  const abs = posix.resolve(root, stripped);
  const rel = posix.relative(root, abs);
  return rel === '' ? '.' : rel.startsWith('../') || rel === '..' ? abs : rel;
}

function canonicalWord(word: string, ctx: CanonicalContext): string {
  if (SCHEME.test(word)) {
    try {
      return canonicalUrl(word);
    } catch {
      return word;
    }
  }
  if (word.startsWith('-')) {
    const eq = word.indexOf('=');
    return word.startsWith('--') && eq > 0 ? `${word.slice(0, eq + 1)}${canonicalWord(word.slice(eq + 1), ctx)}` : word;
  }
  return word.includes('/') || word === '.' || word === '..' ? canonicalPath(word, ctx) : word;
}

/** An argv word in single quotes when it holds what would otherwise split or quote it, so words keep their bounds. */
function quoteWord(word: string): string {
  return word === '' || /[\s'"\\]/.test(word) ? `'${word.replace(/'/g, `'\\''`)}'` : word;
}

/**
 * A shell command as the program will receive it: the argv after quotes and escapes, joined by
 * one space (a word with a space in it quoted), the program by its name, each path argument canonical (see canonicalPath) and each
 * URL canonical. A command the tool would refuse (chaining, substitution, redirection) has none.
 */
export function canonicalCommand(command: string, ctx: CanonicalContext): { text: string; loose: string } {
  const argv = parseCommand(command);
  const words = [posix.basename(argv[0] as string), ...argv.slice(1).map((w) => canonicalWord(w, ctx))];
  return { text: words.map(quoteWord).join(' '), loose: words.join(' ') };
}

function explain(e: unknown): string {
  return isRuntimeError(e) || e instanceof Error ? e.message : String(e);
}

/** The canonical form of argument `key` of a call to `tool`; non-strings are matched as their JSON. */
export function canonicalArgument(tool: string, key: string, value: unknown, ctx: CanonicalContext = {}): CanonicalArgument {
  if (typeof value !== 'string') return { text: JSON.stringify(value ?? null) };
  if (tool === 'shell' && key === 'command') {
    try {
      return canonicalCommand(value, ctx);
    } catch (e) {
      return { unparseable: explain(e) };
    }
  }
  if (URL_KEYS.has(key.toLowerCase()) || SCHEME.test(value)) {
    try {
      return { text: canonicalUrl(value) };
    } catch (e) {
      if (URL_KEYS.has(key.toLowerCase())) return { unparseable: `not a URL: ${explain(e)}` };
      return { text: value };
    }
  }
  if (PATH_KEYS.has(key.toLowerCase())) return { text: canonicalPath(value, ctx) };
  return { text: value };
}

/**
 * The canonical form of a rule's glob pattern for argument `key`: the same spelling rules applied
 * to the pattern, its `*` and `?` kept, so `cat  /etc//passwd` as a pattern means `cat /etc/passwd`.
 * A pattern that does not parse is kept as written.
 */
export function canonicalPattern(tool: string, key: string, pattern: string, ctx: CanonicalContext = {}): string {
  const c = canonicalArgument(tool, key, pattern, ctx);
  return 'text' in c ? c.loose ?? c.text : pattern;
}
