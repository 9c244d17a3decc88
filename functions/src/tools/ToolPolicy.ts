import { z } from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';
import { canonicalArgument, canonicalPattern, type CanonicalContext } from './canonicalArgument.js';

/** One approval policy rule: the first rule whose tool and argument patterns match decides. */
export const PolicyRule = z.strictObject({
  /** Optional label shown in approvals and records. */
  name: z.string().optional(),
  /** Tool name, or a glob (`*`, `mcp.*`). */
  tool: z.string().min(1),
  /** Argument name → glob or `/regex/` the argument's string form must match. */
  args: z.record(z.string(), z.string()).optional(),
  action: z.enum(['allow', 'deny', 'approve']),
  /** An approve rule's wait for a human, in seconds (-1: no deadline), as a Contenox HITL rule's `timeout_s` gives it. */
  timeout_s: z.number().int().min(-1).max(7 * 24 * 60 * 60).optional(),
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
}

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
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
 * matches the raw text as written: a rule never catches fewer spellings than it names literally.
 */
function patternMatches(rule: PolicyRule, tool: string, key: string, pattern: string, raw: unknown, canonical: { text: string; loose?: string }, ctx: CanonicalContext): boolean {
  const canonicalGlob = canonicalPattern(tool, key, pattern, ctx);
  if (globOrRegexMatches(pattern, canonical.text, canonicalGlob)) return true;
  if (rule.action === 'allow') return false;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? null);
  return (canonical.loose !== undefined && globOrRegexMatches(pattern, canonical.loose, canonicalGlob)) || globOrRegexMatches(pattern, text, pattern);
}

/** Validates policy rules (strict: a misspelt key fails at once). */
export function parsePolicyRules(raw: readonly unknown[]): PolicyRule[] {
  return raw.map((r, i) => {
    const parsed = PolicyRule.safeParse(r);
    if (!parsed.success) {
      throw new RuntimeError('ConfigError', `policy rule ${i}: ${parsed.error.issues.map((x) => `${x.path.join('.') || '(rule)'}: ${x.message}`).join('; ')}`);
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
export function evaluatePolicy(rules: readonly PolicyRule[], tool: string, args: Record<string, unknown>, ctx: CanonicalContext = {}): PolicyDecision {
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
      if (!(k in args)) { matches = false; break; }
      const c = canonicalOf(k);
      if ('unparseable' in c) return { action: 'deny', rule: name, reason: `argument "${k}" cannot be parsed (${c.unparseable}), so policy ${name} cannot be checked against it` };
      if (!patternMatches(rule, tool, k, p, args[k], c, ctx)) { matches = false; break; }
    }
    if (matches) return { action: rule.action, rule: name };
  }
  return { action: 'allow' };
}
