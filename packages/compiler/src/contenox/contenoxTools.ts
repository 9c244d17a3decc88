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

/** Our tool names for a Contenox tool name; undefined when neither a Contenox set nor one of ours. */
export function mapContenoxTool(name: string): readonly string[] | undefined {
  return CONTENOX_TOOLS[name] ?? (OWN_TOOLS.includes(name) ? [name] : undefined);
}

/** Every name a chain may use, for "did you mean" and the error's list. */
export function knownToolNames(): string[] {
  return [...Object.keys(CONTENOX_TOOLS), ...OWN_TOOLS];
}
