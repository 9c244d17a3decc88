// Contenox HITL policies (hitl-policy-v1) as approval policy rules. Rules keep their order (first
// match wins) and `default_action` becomes a last catch-all rule. A rule for a tool set with no
// counterpart here gates nothing here and is dropped; anything this reader does not understand is an
// error, never skipped, because a skipped deny would let a call through.
import type { PolicyRule } from './ToolPolicy.js';

const ACTIONS = ['approve', 'allow', 'deny'] as const;

/** Contenox tool set + tool → the tools here it stands for ('*' for any tool). */
function toolsFor(set: string, tool: string): string[] {
  // No tool set: the tool is named directly (Contenox's or one of ours).
  if (set === '*' || set === '') return tool === '*' || tool === '' ? ['*'] : tool === 'local_shell' ? ['shell'] : [tool];
  switch (set) {
    case 'local_shell': return ['shell'];
    case 'local_fs':
      if (tool === '*' || tool === '') return ['fs-read', 'fs-list'];
      if (['read_file', 'read_file_range', 'grep', 'stat_file', 'count_stats'].includes(tool)) return ['fs-read'];
      if (['list_dir', 'find_files'].includes(tool)) return ['fs-list'];
      return [];
    case 'webtools': return tool === '*' || tool === '' || tool === 'web_get' || tool === 'web_head' ? ['http_fetch'] : [];
    default: return [];
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const list = (v: string) => v.split(',').map((x) => x.trim()).filter((x) => x !== '').map(escape).join('|');

/**
 * A Contenox path glob as a pattern here: `{a,b}` alternatives, `**` any depth, `*` and `?` within
 * a segment. Written as a /regex/ because our globs have no `{a,b}`; the deny rules depend on them.
 */
function globRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') out += '(?:';
    else if (c === '}') out += ')';
    else if (c === ',' && out.lastIndexOf('(?:') > out.lastIndexOf(')')) out += '|';
    else out += escape(c);
  }
  return `/^${out}$/`;
}

/** One `when` condition as [argument, pattern]; a message when it cannot be read. */
function condition(c: Record<string, unknown>): [string, string] | string {
  const op = c.op;
  const value = typeof c.value === 'string' ? c.value : '';
  const key = typeof c.key === 'string' ? c.key : '';
  switch (op) {
    case 'glob': return [key, globRegex(value)];
    case 'command_blacklist':
    case 'command_ask_always': return ['command', `/^\\s*(${list(value)})(\\s|$)/`];
    // Line-start prefixes, and no shell metacharacter anywhere in the line.
    case 'command_prefix_allowlist': return ['command', `/^(?![^]*[;&|<>$\`])\\s*(${list(value)})(\\s|$)/`];
    case 'no_command_substitution': return ['command', '/\\$\\(|`/'];
    case 'host': return [key || 'url', `/^[a-z][a-z0-9+.-]*:\\/\\/(\\[)?(${list(value)})(\\])?(:|\\/|$)/i`];
    default: return `unknown condition op ${JSON.stringify(op)} (this reader knows glob, command_blacklist, command_ask_always, command_prefix_allowlist, no_command_substitution, host)`;
  }
}

/** Translates a parsed hitl-policy-v1 document; `fail(path, message)` reports what cannot be read. */
export function hitlPolicyRules(doc: Record<string, unknown>, fail: (path: readonly PropertyKey[], message: string) => never): PolicyRule[] {
  const fallback = doc.default_action ?? 'approve';
  if (typeof fallback !== 'string' || !(ACTIONS as readonly string[]).includes(fallback)) fail(['default_action'], `default_action must be approve, allow or deny, got ${JSON.stringify(fallback)}`);
  if (doc.rules !== undefined && !Array.isArray(doc.rules)) fail(['rules'], '"rules" must be a list of rules');
  const out: PolicyRule[] = [];
  ((doc.rules ?? []) as unknown[]).forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(['rules', i], 'a rule must be an object');
    const r = raw as Record<string, unknown>;
    if (typeof r.action !== 'string' || !(ACTIONS as readonly string[]).includes(r.action)) fail(['rules', i, 'action'], `action must be approve, allow or deny, got ${JSON.stringify(r.action)}`);
    // An expired ask is a denial; Contenox refuses on_timeout "allow" for the same reason.
    if (r.on_timeout !== undefined && r.on_timeout !== 'deny') fail(['rules', i, 'on_timeout'], `on_timeout ${JSON.stringify(r.on_timeout)} is refused: an unanswered approval is denied`);
    // timeout_s: seconds to wait; 0 (no rule deadline) and -1 (no deadline at all) leave the
    // runtime's approval timeout, the ceiling every wait here has (a waiting state has a deadline).
    const t = r.timeout_s;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < -1)) fail(['rules', i, 'timeout_s'], `timeout_s must be a whole number of seconds (0: no rule deadline, -1: none at all), got ${JSON.stringify(t)}`);
    const timeout = typeof t === 'number' && t > 0 ? { timeoutSeconds: t } : {};
    for (const k of ['tools', 'tool'] as const) if (r[k] !== undefined && typeof r[k] !== 'string') fail(['rules', i, k], `"${k}" must be a string`);
    if (r.when !== undefined && !Array.isArray(r.when)) fail(['rules', i, 'when'], '"when" must be a list of conditions');
    const args: Record<string, string> = {};
    ((r.when ?? []) as unknown[]).forEach((c, j) => {
      if (c === null || typeof c !== 'object') fail(['rules', i, 'when', j], 'a condition must be an object {key, op, value}');
      const got = condition(c as Record<string, unknown>);
      if (typeof got === 'string') fail(['rules', i, 'when', j, 'op'], got);
      if (got[0] in args) fail(['rules', i, 'when', j], `two conditions on "${got[0]}" in one rule cannot be expressed here; split the rule`);
      args[got[0]] = got[1];
    });
    const tools = toolsFor((r.tools as string | undefined) ?? '*', (r.tool as string | undefined) ?? '*');
    for (const tool of tools) out.push({ name: `rules[${i}]`, tool, ...(Object.keys(args).length > 0 ? { args } : {}), action: r.action as PolicyRule['action'], ...(r.action === 'approve' ? timeout : {}) });
  });
  out.push({ name: 'default_action', tool: '*', action: fallback as PolicyRule['action'] });
  return out;
}
