// What compileIr reads off the serialised definition: its UTF-8 size (the 1 MB quota), the
// `${…}` placeholders it uses (the manifest's list for DefinitionSubstitutions) and the Bedrock
// models its steps name (the manifest's bedrockModels), from the text it serialises anyway.
import { placeholder, placeholderNames } from '@stepforge/contract';

/** The serialised definition's size and placeholders. */
export interface SerialisedDefinition {
  /** UTF-8 bytes of JSON.stringify(definition). */
  readonly bytes: number;
  /** Every `${Name}` placeholder in it, each once, sorted. */
  readonly placeholders: readonly string[];
  /** The ids of every `bedrock:<id>` string value in it (a step's or an agent's model), each once, sorted. */
  readonly bedrockModels: readonly string[];
}

/** A JSON string value (never a key: no `:` follows) that is a whole `bedrock:<id>` model. */
const BEDROCK_VALUE = /"bedrock:((?:[^"\\]|\\.)+)"(?!:)/g;

/**
 * Measures JSON.stringify(definition) from two serialisations: its States, and the rest with a
 * one-character stand-in for them. One character outside Latin-1 (the definition's Comment has an em
 * dash) makes V8 build the whole megabyte as a two-byte string, which Buffer.byteLength then copies
 * once more to count; apart, the States stay one-byte for Latin-1 sources. Placeholders sit inside
 * JSON strings, which never span the cut, so scanning both parts finds what scanning the whole would.
 */
export function serialisedDefinition(definition: Readonly<Record<string, unknown>>): SerialisedDefinition {
  const states = definition.States;
  if (states === null || typeof states !== 'object') {
    const json = JSON.stringify(definition);
    return { bytes: Buffer.byteLength(json, 'utf8'), placeholders: placeholdersIn([json]), bedrockModels: bedrockModelsIn([json]) };
  }
  const statesJson = JSON.stringify(states);
  const rest = JSON.stringify({ ...definition, States: 0 });
  return {
    bytes: Buffer.byteLength(rest, 'utf8') - 1 + Buffer.byteLength(statesJson, 'utf8'),
    placeholders: placeholdersIn([rest, statesJson]),
    bedrockModels: bedrockModelsIn([rest, statesJson]),
  };
}

function placeholdersIn(texts: readonly string[]): string[] {
  return [...new Set(texts.flatMap((t) => placeholderNames(t)))].sort().map(placeholder);
}

function bedrockModelsIn(texts: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(BEDROCK_VALUE)) ids.add(JSON.parse(`"${m[1]!}"`) as string);
  return [...ids].sort();
}
