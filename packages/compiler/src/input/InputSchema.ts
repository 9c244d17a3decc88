import { z } from 'zod';
import type { SourceLocation } from '@stepforge/contract';

/** The value types an `input:` field can declare. */
export const INPUT_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'any'] as const;

/** One input field type. */
export type InputFieldType = (typeof INPUT_FIELD_TYPES)[number];

/** One declared input field, normalised from the shorthand or mapping form. */
export interface InputField {
  readonly name: string;
  readonly type: InputFieldType;
  /** Missing required fields fail the run at start; a field with a default is never missing. */
  readonly required: boolean;
  readonly description?: string;
  /** Present only when declared (`null` is a valid default). */
  readonly default?: unknown;
  readonly hasDefault: boolean;
  readonly location?: SourceLocation;
}

/** The `input:` section of a chain or DSL document: fields in source order. */
export interface InputSchema {
  readonly fields: readonly InputField[];
}

/** Zod schema of one `input:` field: a type name (shorthand) or `{type, required, description, default}`. */
export const InputFieldSpec = z.union([
  z.enum(INPUT_FIELD_TYPES).describe('Shorthand: the field type; the field is required.'),
  z.strictObject({
    type: z.enum(INPUT_FIELD_TYPES).default('any').describe('Value type (default any).'),
    required: z.boolean().default(true).describe('Fail the run when the field is missing (default true).'),
    description: z.string().optional().describe('What the field is for.'),
    default: z.unknown().optional().describe('Value used when the field is missing.'),
  }),
]);

/** Zod schema of the whole `input:` section. */
export const InputSectionSpec = z.record(z.string(), InputFieldSpec);

/** True when `value` has the declared type. */
export function matchesInputType(type: InputFieldType, value: unknown): boolean {
  switch (type) {
    case 'any': return true;
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'integer': return typeof value === 'number' && Number.isInteger(value);
    case 'boolean': return typeof value === 'boolean';
    case 'array': return Array.isArray(value);
    case 'object': return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

/** A short description of a value's JSON type, for messages. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

/**
 * Normalises an `input:` section (plain data, already checked by InputSectionSpec) into an
 * InputSchema; `locate` gives each field's location when the caller knows it.
 */
export function toInputSchema(
  section: Readonly<Record<string, z.input<typeof InputFieldSpec>>> | undefined,
  locate?: (name: string) => SourceLocation | undefined,
): InputSchema {
  const fields: InputField[] = [];
  for (const [name, spec] of Object.entries(section ?? {})) {
    const location = locate?.(name);
    if (typeof spec === 'string') {
      fields.push({ name, type: spec, required: true, hasDefault: false, ...(location ? { location } : {}) });
      continue;
    }
    const hasDefault = Object.prototype.hasOwnProperty.call(spec, 'default') && spec.default !== undefined;
    fields.push({
      name,
      type: spec.type ?? 'any',
      required: hasDefault ? false : (spec.required ?? true),
      hasDefault,
      ...(spec.description !== undefined ? { description: spec.description } : {}),
      ...(hasDefault ? { default: spec.default } : {}),
      ...(location ? { location } : {}),
    });
  }
  return { fields };
}
