/** What a workflow (state machine) name may be: 1–80 letters, digits, '-' and '_'. */
export const WORKFLOW_NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * The workflow name a chain document without `name:` gets: its file name without the directory and
 * the `.chain.yaml` / `.yaml` / `.yml` / `.json` extension. Unchecked: the loader reports a name that
 * breaks WORKFLOW_NAME_PATTERN. No file, or a `<…>` pseudo-source (`<input>`, `<new swarm>`: text that
 * is not read from a file), gives `workflow`.
 */
export function workflowNameFromFile(file: string | undefined): string {
  if (file === undefined || /^<.*>$/.test(file)) return 'workflow';
  // No node:path: the compiler does no I/O and may run where Node's modules are absent.
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  return base.replace(/\.(chain\.)?(ya?ml|json)$/i, '').replace(/\.chain$/, '') || 'workflow';
}

/** A valid workflow name close to `name` (runs of other characters become '-'), to suggest as `name:`. */
export function sanitiseWorkflowName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return cleaned === '' ? 'workflow' : cleaned;
}
