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

/** Every Task state's `Resource` in a definition, with the JSON path of the state (the interpreter's walker). */
export { taskResources as collectTaskResources } from '../interpreter/executeStateMachine.js';
