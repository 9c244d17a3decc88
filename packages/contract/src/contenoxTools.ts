// Contenox tool names → the tools of this runtime. Contenox's registry names a tool *set*
// (`local_fs` has read and list operations); here each operation is its own tool.

/** Each Contenox tool set and the tools it stands for here. */
export const CONTENOX_TOOLS: Readonly<Record<string, readonly string[]>> = {
  local_shell: ['shell'],
  local_fs: ['fs-list', 'fs-read'],
  webtools: ['http_fetch'],
};

/** The built-in tools, which a chain may also name directly. */
export const OWN_TOOLS: readonly string[] = ['shell', 'fs-list', 'fs-read', 'http_fetch', 'web-search'];

/**
 * The keys Contenox's own tools read from a task's `tools_policies.<set>`, per tool set. The ones
 * the runtime narrows its policy with are in CONTENOX_ENFORCED_POLICY_KEYS; the others tune
 * behaviour Contenox's tools have and ours do not (recursive listing, grep, retries), so they are
 * accepted and have no effect. A key in neither is an authoring error: a misspelt limit must not
 * pass for one that holds.
 */
export const CONTENOX_POLICY_KEYS: Readonly<Record<string, readonly string[]>> = {
  local_shell: ['_allowed_commands', '_denied_commands', '_allowed_dir'],
  local_fs: [
    '_allowed_dir',
    '_max_read_bytes',
    '_max_output_bytes',
    '_denied_path_substrings',
    '_model_context_tokens',
    '_max_grep_matches',
    '_max_list_depth',
    '_max_list_scan',
    '_max_find_results',
    '_max_find_depth',
    '_verbose_tool_descriptions',
    '_use_gitignore',
    '_skip_dir_names',
    '_list_extensions',
  ],
  webtools: [
    '_allowed_hosts',
    '_denied_hosts',
    '_allowed_schemes',
    '_max_response_bytes',
    '_request_timeout_seconds',
    '_disallow_redirects',
    '_max_request_body_bytes',
    '_max_attempts',
    '_initial_backoff_ms',
    '_max_backoff_ms',
  ],
};

/** The policy keys the runtime enforces, per tool set (see CONTENOX_POLICY_KEYS). */
export const CONTENOX_ENFORCED_POLICY_KEYS: Readonly<Record<string, readonly string[]>> = {
  local_shell: ['_allowed_commands', '_denied_commands', '_allowed_dir'],
  local_fs: ['_allowed_dir', '_max_read_bytes', '_max_output_bytes', '_denied_path_substrings'],
  webtools: ['_allowed_hosts', '_denied_hosts', '_allowed_schemes', '_max_response_bytes', '_request_timeout_seconds'],
};

/** The Contenox tool set whose policy keys apply to one of our tools (`shell` → `local_shell`). */
export function contenoxToolSetOf(tool: string): string | undefined {
  if (tool in CONTENOX_TOOLS) return tool;
  return Object.keys(CONTENOX_TOOLS).find((set) => CONTENOX_TOOLS[set]!.includes(tool));
}

/** Our tool names for a Contenox tool name; undefined when neither a Contenox set nor one of ours. */
export function mapContenoxTool(name: string): readonly string[] | undefined {
  return CONTENOX_TOOLS[name] ?? (OWN_TOOLS.includes(name) ? [name] : undefined);
}

/** Every name a chain may use, for "did you mean" and the error's list. */
export function knownToolNames(): string[] {
  return [...Object.keys(CONTENOX_TOOLS), ...OWN_TOOLS];
}
