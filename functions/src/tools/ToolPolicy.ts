import { z } from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';

/** One approval policy rule: the first rule whose tool and argument patterns match decides. */
export const PolicyRule = z.strictObject({
  /** Optional label shown in approvals and records. */
  name: z.string().optional(),
  /** Tool name, or a glob (`*`, `mcp.*`). */
  tool: z.string().min(1),
  /** Argument name → glob or `/regex/` the argument's string form must match. */
  args: z.record(z.string(), z.string()).optional(),
  action: z.enum(['allow', 'deny', 'approve']),
});
/** One approval policy rule. */
export type PolicyRule = z.infer<typeof PolicyRule>;

/** The outcome of evaluating the rules for one call. */
export interface PolicyDecision {
  readonly action: 'allow' | 'deny' | 'approve';
  /** The rule that matched (its name or index); absent for the default allow. */
  readonly rule?: string;
}

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${esc}$`, 's');
}

function patternMatches(pattern: string, value: unknown): boolean {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  if (pattern.length > 1 && pattern.startsWith('/') && pattern.lastIndexOf('/') > 0) {
    const last = pattern.lastIndexOf('/');
    return new RegExp(pattern.slice(1, last), pattern.slice(last + 1)).test(text);
  }
  return globToRegExp(pattern).test(text);
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

/** First match wins; no match allows (a granted tool with no rule against it). */
export function evaluatePolicy(rules: readonly PolicyRule[], tool: string, args: Record<string, unknown>): PolicyDecision {
  for (const [i, rule] of rules.entries()) {
    if (!globToRegExp(rule.tool).test(tool)) continue;
    const argPatterns = Object.entries(rule.args ?? {});
    if (argPatterns.every(([k, p]) => k in args && patternMatches(p, args[k]))) {
      return { action: rule.action, rule: rule.name ?? `rule ${i}` };
    }
  }
  return { action: 'allow' };
}
