import * as z from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';
import { canonicalArgument, canonicalPattern, patternNamesOptions, type CanonicalContext } from './canonicalArgument.js';

/** One approval policy rule: the first rule whose tool and argument patterns match decides. */
export const PolicyRule = z.strictObject({
  /** Optional label shown in approvals and records. */
  name: z.string().optional(),
  /** Tool name, or a glob (`*`, `mcp.*`). */
  tool: z.string().min(1),
  /** Argument name → glob or `/regex/` the argument's string form must match. */
  args: z.record(z.string(), z.string()).optional(),
  action: z.enum(['allow', 'deny', 'approve']),
  /**
   * How long an `approve` rule's ask waits for a human before it is denied, at most the runtime's
   * approval timeout (the operator's ceiling); absent: that ceiling. A Contenox rule's `timeout_s`.
   */
  timeoutSeconds: z.number().int().positive().optional(),
});
/** One approval policy rule. */
export type PolicyRule = z.infer<typeof PolicyRule>;

/** The outcome of evaluating the rules for one call. */
export interface PolicyDecision {
  readonly action: 'allow' | 'deny' | 'approve';
  /** The rule that matched (its name or index); absent for the default allow. */
  readonly rule?: string;
  /** Why a call was denied without a rule's action: an argument a rule constrains could not be parsed. */
  readonly reason?: string;
  /** The matching approve rule's own deadline (see PolicyRule.timeoutSeconds). */
  readonly timeoutSeconds?: number;
}

function globToRegExp(glob: string): RegExp {
  const esc = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${esc}$`, 's');
}

function globOrRegexMatches(pattern: string, text: string, canonical: string): boolean {
  if (pattern.length > 1 && pattern.startsWith('/') && pattern.lastIndexOf('/') > 0) {
    const last = pattern.lastIndexOf('/');
    return new RegExp(pattern.slice(1, last), pattern.slice(last + 1)).test(text);
  }
  return globToRegExp(canonical).test(text);
}

/**
 * Whether `pattern` matches argument `key`. The canonical form of the argument (parsed argv,
 * normalised paths and URLs; see canonicalArgument) is matched against the canonical form of the
 * pattern, so another spelling of the same call matches the same rules. A deny or approve rule also
 * matches the raw text as written: a rule never catches fewer spellings than it names literally;
 * and, naming no option, the command without its options (canonicalCommand's operands).
 */
function patternMatches(
  rule: PolicyRule,
  tool: string,
  key: string,
  pattern: string,
  raw: unknown,
  canonical: { text: string; loose?: string; operands?: readonly string[]; words?: readonly string[] },
  ctx: CanonicalContext,
): boolean {
  const canonicalGlob = canonicalPattern(tool, key, pattern, ctx);
  if (globOrRegexMatches(pattern, canonical.text, canonicalGlob)) return true;
  if (rule.action === 'allow') return false;
  // A command rule that names no option gates its program and operands with any options added.
  if (canonical.operands !== undefined && !patternNamesOptions(pattern)) {
    if (canonical.operands.some((o) => globOrRegexMatches(pattern, o, canonicalGlob))) return true;
    if (canonical.words !== undefined && namesAmong(tool, key, pattern, canonical.words, ctx)) return true;
  }
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? null);
  return (
    (canonical.loose !== undefined && globOrRegexMatches(pattern, canonical.loose, canonicalGlob)) ||
    globOrRegexMatches(pattern, text, pattern)
  );
}

/**
 * Whether a command pattern's program matches the call's, and each operand it names is among the
 * call's operands, in any order and with others beside it: a rule that keeps a file from a program
 * keeps it when the file is read together with others. Each word of the pattern is a glob of one word.
 */
function namesAmong(tool: string, key: string, pattern: string, words: readonly string[], ctx: CanonicalContext): boolean {
  const named = canonicalArgument(tool, key, pattern, ctx);
  if (!('words' in named) || named.words === undefined || named.words.length < 2 || words.length < 2) return false;
  const [program, ...operands] = named.words.map(globToRegExp);
  const [calledProgram, ...given] = words;
  return program!.test(calledProgram!) && operands.every((o) => given.some((w) => o.test(w)));
}

/** Validates policy rules (strict: a misspelt key fails at once). */
export function parsePolicyRules(raw: readonly unknown[]): PolicyRule[] {
  return raw.map((r, i) => {
    const parsed = PolicyRule.safeParse(r);
    if (!parsed.success) {
      throw new RuntimeError(
        'ConfigError',
        `policy rule ${i}: ${parsed.error.issues.map((x) => `${x.path.join('.') || '(rule)'}: ${x.message}`).join('; ')}`,
      );
    }
    return parsed.data;
  });
}

/**
 * First match wins; no match allows (a granted tool with no rule against it). An argument that a
 * rule for this tool constrains but that cannot be parsed (a shell command with chaining or
 * substitution, a URL that is not one) is denied: its canonical form, and so the rules' verdict,
 * is unknown.
 */
export function evaluatePolicy(
  rules: readonly PolicyRule[],
  tool: string,
  args: Record<string, unknown>,
  ctx: CanonicalContext = {},
): PolicyDecision {
  const canonical = new Map<string, ReturnType<typeof canonicalArgument>>();
  const canonicalOf = (key: string) => {
    if (!canonical.has(key)) canonical.set(key, canonicalArgument(tool, key, args[key], ctx));
    return canonical.get(key)!;
  };
  for (const [i, rule] of rules.entries()) {
    if (!globToRegExp(rule.tool).test(tool)) continue;
    const name = rule.name ?? `rule ${i}`;
    let matches = true;
    for (const [k, p] of Object.entries(rule.args ?? {})) {
      if (!(k in args)) {
        matches = false;
        break;
      }
      const c = canonicalOf(k);
      if ('unparseable' in c)
        return {
          action: 'deny',
          rule: name,
          reason: `argument "${k}" cannot be parsed (${c.unparseable}), so policy ${name} cannot be checked against it`,
        };
      if (!patternMatches(rule, tool, k, p, args[k], c, ctx)) {
        matches = false;
        break;
      }
    }
    if (matches)
      return { action: rule.action, rule: name, ...(rule.timeoutSeconds !== undefined ? { timeoutSeconds: rule.timeoutSeconds } : {}) };
  }
  return { action: 'allow' };
}
