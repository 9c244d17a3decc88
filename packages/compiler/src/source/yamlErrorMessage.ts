/**
 * A YAML parse error's message, as a workflow author reads it: the `yaml` package's first line,
 * without its own position (the diagnostic carries line:column), and, where the package speaks of
 * its own API (`please use YAML.parseAllDocuments()`), what to change in the file instead.
 */
export function yamlErrorMessage(e: { readonly code?: string; readonly message: string }): string {
  if (e.code === 'MULTIPLE_DOCS') {
    return "a workflow file holds one YAML document, and a second one starts here: remove this '---' line and what follows, or put it in a file of its own";
  }
  return e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}
