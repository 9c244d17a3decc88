// Meaning-preserving edits for the fast-path tests (DSL and chain): a restyled valid document must
// load the same on both paths, or the fast path must decline.
import type { Rand } from './exprCorpus.js';

/** A random element of `xs`. */
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Meaning-preserving edits a person makes: comments, blank lines, quoted values and keys, CRLF, a BOM. */
export function restyle(r: Rand, text: string): string {
  let lines = text.split('\n').map((line) => {
    const p = r();
    if (p < 0.15 && /^\s*[\w-]+: [\w.-]+$/.test(line)) return `${line}   # ${pick(r, ['why', 'note: x', '#', ''])}`;
    if (p < 0.3) {
      // Quote a plain, single-line value that needs no escaping.
      const m = /^(\s*(?:- )?[\w-]+: )([A-Za-z_][\w./-]*)$/.exec(line);
      if (m) return r() < 0.5 ? `${m[1]}"${m[2]}"` : `${m[1]}'${m[2]}'`;
    }
    if (p < 0.35) return `${line}\n`;
    // Quote a key (a step name in `steps:` is one): locations of keys must not move with it.
    if (p < 0.37) {
      const k = /^(\s*)([A-Za-z_][\w-]*):(\s.*)?$/.exec(line);
      if (k) return `${k[1]}${r() < 0.5 ? `"${k[2]}"` : `'${k[2]}'`}:${k[3] ?? ''}`;
    }
    return line;
  });
  if (r() < 0.2) lines = ['# restyled', ...lines];
  let out = lines.join('\n');
  if (r() < 0.25) out = out.replace(/\n/g, '\r\n');
  if (r() < 0.15) out = `\uFEFF${out}`;
  return out;
}
