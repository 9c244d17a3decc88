/**
 * Replaces `${Name}` placeholders in a definition's text, the way CDK's DefinitionSubstitutions do
 * (anywhere in the text, before it is parsed). Unknown placeholders are left as they are.
 */
export function applySubstitutions(text: string, substitutions: Readonly<Record<string, string>> | undefined): string {
  if (!substitutions) return text;
  return text.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(substitutions, name) ? substitutions[name]! : whole,
  );
}

/** Every Task state's `Resource` in a definition, with the JSON path of the state (nested branches/processors too). */
export function collectTaskResources(definition: unknown, path = ''): { resource: string; path: string }[] {
  const out: { resource: string; path: string }[] = [];
  const states = (definition as { States?: unknown } | null)?.States;
  if (states === null || typeof states !== 'object') return out;
  for (const [name, raw] of Object.entries(states as Record<string, unknown>)) {
    if (raw === null || typeof raw !== 'object') continue;
    const s = raw as Record<string, unknown>;
    const here = `${path}/States/${name}`;
    if (s.Type === 'Task' && typeof s.Resource === 'string') out.push({ resource: s.Resource, path: `${here}/Resource` });
    if (Array.isArray(s.Branches)) s.Branches.forEach((b, i) => out.push(...collectTaskResources(b, `${here}/Branches/${i}`)));
    if (s.ItemProcessor) out.push(...collectTaskResources(s.ItemProcessor, `${here}/ItemProcessor`));
    if (s.Iterator) out.push(...collectTaskResources(s.Iterator, `${here}/Iterator`));
  }
  return out;
}
