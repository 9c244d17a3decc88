// Contenox HITL policies (hitl-policy-v1) as approval policy rules. Rules keep their order (first
// match wins) and `default_action` becomes a last catch-all rule. A rule for a tool set with no
// counterpart here gates nothing here and is dropped; anything this reader does not understand is an
// error, never skipped, because a skipped deny would let a call through. The fields accepted are
// exactly Contenox's own (its policy vet's lists); keys starting with `//` and `$schema` are comments.
import { didYouMean } from '@stepforge/contract';
import type { PolicyRule } from './ToolPolicy.js';

const TOP_FIELDS = ['version', 'default_action', 'rules', 'compute', 'attention', 'trusted_binaries'];
const RULE_FIELDS = ['tools', 'tool', 'when', 'action', 'timeout_s', 'on_timeout'];
const CONDITION_FIELDS = ['key', 'op', 'value'];
const COMPUTE_FIELDS = ['maxTurns', 'maxToolCalls', 'maxTokens', 'modelAllowlist', 'backendAllowlist', 'onExhausted'];
const ATTENTION_FIELDS = ['allowAgentAnswers', 'maxAgentAnswers', 'allowAgentApprovals', 'maxAgentApprovals'];
const TRUSTED_BINARIES_FIELDS = ['dirs', 'hashes'];
/** The policy wire version Contenox writes (absent or 0 means it). */
const POLICY_VERSION = 1;
/** Contenox caps an approval's wait at seven days: a longer one is a typo, not an intent. */
const MAX_TIMEOUT_S = 7 * 24 * 60 * 60;

const isComment = (k: string) => k.startsWith('//') || k === '$schema';

type Fail = (path: readonly PropertyKey[], message: string) => never;

/** Refuses a field of `obj` that Contenox's format does not have (a misspelt `whenn` would disarm a rule). */
function knownFields(obj: Record<string, unknown>, known: readonly string[], path: readonly PropertyKey[], what: string, fail: Fail): void {
  for (const k of Object.keys(obj)) {
    if (isComment(k) || known.includes(k)) continue;
    const near = didYouMean(k, known);
    // `args` belongs to Stepforge's own rules (a JSON array), not to Contenox's, which match arguments with `when`.
    const ours =
      k === 'args' && what === 'rule'
        ? '; `args` belongs to a Stepforge policy (a JSON array of rules): in a Contenox rule match arguments with when: [{"key", "op", "value"}]'
        : '';
    fail(
      [...path, k],
      `unknown field '${k}' in ${what}${near ? ` (did you mean '${near}'?)` : ''}; a Contenox HITL ${what} has ${known.join(', ')} (keys starting with // are comments)${ours}`,
    );
  }
}

/** An optional sub-object (compute, attention, trusted_binaries): an object with only its known fields. */
function subObject(doc: Record<string, unknown>, name: string, known: readonly string[], fail: Fail): Record<string, unknown> | undefined {
  const v = doc[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) fail([name], `"${name}" must be an object`);
  knownFields(v as Record<string, unknown>, known, [name], `"${name}" block`, fail);
  return v as Record<string, unknown>;
}

const ACTIONS = ['approve', 'allow', 'deny'] as const;

/** Contenox tool set + tool → the tools here it stands for ('*' for any tool). */
function toolsFor(set: string, tool: string): string[] {
  // No tool set: the tool is named directly (Contenox's or one of ours).
  if (set === '*' || set === '') return tool === '*' || tool === '' ? ['*'] : tool === 'local_shell' ? ['shell'] : [tool];
  switch (set) {
    case 'local_shell':
      return ['shell'];
    case 'local_fs':
      if (tool === '*' || tool === '') return ['fs-read', 'fs-list'];
      if (['read_file', 'read_file_range', 'grep', 'stat_file', 'count_stats'].includes(tool)) return ['fs-read'];
      if (['list_dir', 'find_files'].includes(tool)) return ['fs-list'];
      return [];
    case 'webtools':
      return tool === '*' || tool === '' || tool === 'web_get' || tool === 'web_head' ? ['http_fetch'] : [];
    default:
      return [];
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')
    .map(escape)
    .join('|');

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
    case 'glob':
      return [key, globRegex(value)];
    case 'command_blacklist':
    case 'command_ask_always':
      return ['command', `/^\\s*(${list(value)})(\\s|$)/`];
    // Line-start prefixes, and no shell metacharacter anywhere in the line.
    case 'command_prefix_allowlist':
      return ['command', `/^(?![^]*[;&|<>$\`])\\s*(${list(value)})(\\s|$)/`];
    case 'no_command_substitution':
      return ['command', '/\\$\\(|`/'];
    case 'host':
      return [key || 'url', `/^[a-z][a-z0-9+.-]*:\\/\\/(\\[)?(${list(value)})(\\])?(:|\\/|$)/i`];
    default:
      return `unknown condition op ${JSON.stringify(op)} (this reader knows glob, command_blacklist, command_ask_always, command_prefix_allowlist, no_command_substitution, host)`;
  }
}

/** Translates a parsed hitl-policy-v1 document; `fail(path, message)` reports what cannot be read. */
export function hitlPolicyRules(doc: Record<string, unknown>, fail: Fail): PolicyRule[] {
  knownFields(doc, TOP_FIELDS, [], 'policy', fail);
  if (doc.version !== undefined && doc.version !== 0 && doc.version !== POLICY_VERSION)
    fail(['version'], `version ${JSON.stringify(doc.version)} is not one this reader knows (${POLICY_VERSION})`);
  const fallback = doc.default_action ?? 'approve';
  if (typeof fallback !== 'string' || !(ACTIONS as readonly string[]).includes(fallback))
    fail(['default_action'], `default_action must be approve, allow or deny, got ${JSON.stringify(fallback)}`);
  // compute and attention bound a Contenox mission (its spend, and whether an agent may answer its
  // questions); no Stepforge run is a mission, and here only a human answers, so they change nothing.
  subObject(doc, 'compute', COMPUTE_FIELDS, fail);
  subObject(doc, 'attention', ATTENTION_FIELDS, fail);
  // trusted_binaries pins the binary a command_prefix_allowlist allow may run (its directory and
  // SHA-256); the shell tool here does not resolve and hash binaries, so a declaration it holds is
  // refused rather than ignored (ignoring it would allow what Contenox refuses). An empty block is inert.
  const trusted = subObject(doc, 'trusted_binaries', TRUSTED_BINARIES_FIELDS, fail);
  if (trusted) {
    const declared = (v: unknown) =>
      Array.isArray(v) ? v.length > 0 : v !== null && typeof v === 'object' ? Object.keys(v).length > 0 : v !== undefined && v !== null;
    for (const k of TRUSTED_BINARIES_FIELDS) {
      if (declared(trusted[k]))
        fail(
          ['trusted_binaries', k],
          `trusted_binaries.${k} is not supported here: the shell tool does not check the binary a command resolves to, so the allows it restricts cannot be honoured; remove trusted_binaries (or leave it empty), or use a policy without it`,
        );
    }
  }
  if (doc.rules !== undefined && !Array.isArray(doc.rules)) fail(['rules'], '"rules" must be a list of rules');
  const out: PolicyRule[] = [];
  ((doc.rules ?? []) as unknown[]).forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(['rules', i], 'a rule must be an object');
    const r = raw as Record<string, unknown>;
    knownFields(r, RULE_FIELDS, ['rules', i], 'rule', fail);
    if (typeof r.action !== 'string' || !(ACTIONS as readonly string[]).includes(r.action))
      fail(['rules', i, 'action'], `action must be approve, allow or deny, got ${JSON.stringify(r.action)}`);
    // An expired ask is a denial; Contenox refuses on_timeout "allow" for the same reason.
    if (r.on_timeout !== undefined && r.on_timeout !== 'deny')
      fail(['rules', i, 'on_timeout'], `on_timeout ${JSON.stringify(r.on_timeout)} is refused: an unanswered approval is denied`);
    if (
      r.timeout_s !== undefined &&
      (typeof r.timeout_s !== 'number' || !Number.isInteger(r.timeout_s) || r.timeout_s < -1 || r.timeout_s > MAX_TIMEOUT_S)
    ) {
      fail(
        ['rules', i, 'timeout_s'],
        `timeout_s must be a whole number of seconds from -1 (no deadline) to ${MAX_TIMEOUT_S} (seven days), got ${JSON.stringify(r.timeout_s)}`,
      );
    }
    // As Contenox's vet: a timeout on a rule that never waits would silently do nothing.
    if (r.action !== 'approve' && ((r.timeout_s !== undefined && r.timeout_s !== 0) || r.on_timeout !== undefined)) {
      fail(
        ['rules', i, r.timeout_s !== undefined ? 'timeout_s' : 'on_timeout'],
        `timeout_s/on_timeout only apply when action is "approve"; this rule's action "${String(r.action)}" never waits`,
      );
    }
    // 0 (no rule deadline) and -1 (no deadline at all) leave the runtime's approval timeout, the
    // ceiling every wait here has (a waiting state has a deadline).
    const timeout = typeof r.timeout_s === 'number' && r.timeout_s > 0 ? { timeoutSeconds: r.timeout_s } : {};
    for (const k of ['tools', 'tool'] as const) {
      if (r[k] === undefined) continue;
      if (typeof r[k] !== 'string') fail(['rules', i, k], `"${k}" must be a string`);
      // Contenox compares tool names exactly; "*" alone is the only wildcard (a pattern here would match more).
      if (r[k] !== '*' && /[*?[]/.test(r[k] as string))
        fail(
          ['rules', i, k],
          `${k} ${JSON.stringify(r[k])} can never match in Contenox: tool names are compared exactly and the only wildcard is "*" on its own`,
        );
    }
    if (r.when !== undefined && !Array.isArray(r.when)) fail(['rules', i, 'when'], '"when" must be a list of conditions');
    const args: Record<string, string> = {};
    ((r.when ?? []) as unknown[]).forEach((c, j) => {
      if (c === null || typeof c !== 'object' || Array.isArray(c))
        fail(['rules', i, 'when', j], 'a condition must be an object {key, op, value}');
      knownFields(c as Record<string, unknown>, CONDITION_FIELDS, ['rules', i, 'when', j], 'condition', fail);
      for (const k of CONDITION_FIELDS)
        if ((c as Record<string, unknown>)[k] !== undefined && typeof (c as Record<string, unknown>)[k] !== 'string')
          fail(['rules', i, 'when', j, k], `"${k}" must be a string`);
      const got = condition(c as Record<string, unknown>);
      if (typeof got === 'string') fail(['rules', i, 'when', j, 'op'], got);
      if (got[0] in args)
        fail(['rules', i, 'when', j], `two conditions on "${got[0]}" in one rule cannot be expressed here; split the rule`);
      args[got[0]] = got[1];
    });
    const tools = toolsFor((r.tools as string | undefined) ?? '*', (r.tool as string | undefined) ?? '*');
    for (const tool of tools)
      out.push({
        name: `rules[${i}]`,
        tool,
        ...(Object.keys(args).length > 0 ? { args } : {}),
        action: r.action as PolicyRule['action'],
        ...(r.action === 'approve' ? timeout : {}),
      });
  });
  out.push({ name: 'default_action', tool: '*', action: fallback as PolicyRule['action'] });
  return out;
}
