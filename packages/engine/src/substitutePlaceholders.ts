/**
 * Replaces `${Name}` placeholders the way CDK's DefinitionSubstitutions do: anywhere in the text,
 * names of letters, digits, `_`, `.` and `-`, unknown ones left as they are. Used for a definition's
 * text before it is parsed and for a Lambda resource or function name before it is looked up, so
 * both read a placeholder alike. Only the map's own keys count (`${constructor}` stays as written).
 */
export function substitutePlaceholders(text: string, substitutions: Readonly<Record<string, string>> | undefined): string {
  if (!substitutions || !text.includes('${')) return text;
  return text.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(substitutions, name) ? substitutions[name]! : whole,
  );
}
