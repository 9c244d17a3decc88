import { posix } from 'node:path';
import { isRuntimeError } from '../errors/RuntimeError.js';
import { parseCommand } from './shellTool.js';

/**
 * What the policy rules are matched against for one argument: its canonical text, or why it has
 * none. `loose` is a wider reading deny and approve rules also match (a command's words joined
 * without their quotes), so they never catch fewer calls than a reader of the rule would expect.
 */
export type CanonicalArgument =
  | { readonly text: string; readonly loose?: string; readonly operands?: readonly string[]; readonly words?: readonly string[] }
  | { readonly unparseable: string };

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

/** The 8 16-bit groups of an IPv6 address as the URL parser serialises it (lower-case hex, `::` compressed, no dotted tail). */
function ipv6Groups(address: string): number[] | undefined {
  const [head, tail, ...more] = address.split('::');
  if (more.length > 0) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * A host as the address it reaches: an IPv6 address that carries an IPv4 one (IPv4-mapped
 * `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`) as that IPv4
 * address, in dotted form. (Decimal, octal and hexadecimal IPv4 spellings are already dotted by
 * the URL parser.) `::` and `::1` are IPv6's own, not IPv4 addresses.
 */
export function canonicalHost(hostname: string): string {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (!host.startsWith('[') || !host.endsWith(']')) return host;
  const g = ipv6Groups(host.slice(1, -1));
  if (g === undefined) return host;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  const carriesIpv4 =
    (zeros(5) && g[5] === 0xffff) || (zeros(4) && g[4] === 0xffff && g[5] === 0) || (zeros(6) && (g[6] !== 0 || g[7]! > 1));
  if (!carriesIpv4) return host;
  return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
}

/**
 * A URL as a server would read it: lower-case scheme and host (IDN as punycode, no trailing dot, a
 * numeric IPv4 in dotted form, an IPv6 address carrying an IPv4 one as that; see canonicalHost), no default port, no credentials or fragment, the path and query
 * percent-decoded, `//` collapsed and dot segments removed (`%2e%2e` included), no trailing `/`.
 */
export function canonicalUrl(raw: string): string {
  const url = new URL(raw.trim());
  const host = canonicalHost(url.hostname);
  const port = url.port ? `:${url.port}` : '';
  const path = posix.normalize(
    decodeFully(url.pathname)
      .replace(/\\/g, '/')
      .replace(/\/{2,}/g, '/'),
  );
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
 * URL canonical, the end-of-options marker `--` left out (kept only when a word after it starts
 * with `-`, which it makes an operand). A command the tool would refuse (chaining, substitution,
 * redirection) has none.
 *
 * `operands` are the command with its options left out, read both ways an option can be (a flag
 * alone, or one that takes the next word as its value): a deny or approve rule that names no
 * option gates the program and operands it names whatever options come with them (`cat -u
 * notes.txt` is `cat notes.txt` to such a rule), since options that do not name files do not
 * change which files are read. `words` are the program and every word that is no option (option
 * values among them), one by one: such a rule also gates its operands among others
 * (`cat other.txt notes.txt` reads notes.txt too).
 */
export function canonicalCommand(
  command: string,
  ctx: CanonicalContext,
): { text: string; loose: string; operands: string[]; words: string[] } {
  const argv = parseCommand(command);
  const rest = argv.slice(1);
  const marker = rest.indexOf('--');
  const keepMarker = marker >= 0 && rest.slice(marker + 1).some((w) => w.startsWith('-') && w !== '-');
  const words: string[] = [posix.basename(argv[0] as string)];
  const isOption: boolean[] = [false];
  rest.forEach((w, i) => {
    const afterMarker = marker >= 0 && i > marker;
    if (i === marker && !keepMarker) return;
    words.push(canonicalWord(w, ctx));
    // A kept `--` is no operand either.
    isOption.push(i === marker || (!afterMarker && w.startsWith('-') && w !== '-'));
  });
  const flagsAlone = words.filter((_, i) => !isOption[i]);
  // Each option taking the word after it (when that word is no option itself) as its value.
  const withValues = words.filter((_, i) => !isOption[i] && !(i > 0 && isOption[i - 1] && !/=/.test(words[i - 1]!)));
  return {
    text: words.map(quoteWord).join(' '),
    loose: words.join(' '),
    operands: [...new Set([flagsAlone.join(' '), withValues.join(' ')])],
    words: flagsAlone,
  };
}

/** Whether a rule's command pattern names an option (then it matches calls with that option only, as written). */
export function patternNamesOptions(pattern: string): boolean {
  if (pattern.length > 1 && pattern.startsWith('/') && pattern.lastIndexOf('/') > 0) return true;
  try {
    const rest = parseCommand(pattern).slice(1);
    const marker = rest.indexOf('--');
    return (marker >= 0 ? rest.slice(0, marker) : rest).some((w) => w.startsWith('-') && w !== '-');
  } catch {
    return true;
  }
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
  return 'text' in c ? (c.loose ?? c.text) : pattern;
}
