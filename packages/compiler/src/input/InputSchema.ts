import { z } from 'zod';
import { INPUT_FIELD_TYPES, type InputField, type InputSchema, type SourceLocation } from '@stepforge/contract';

export {
  INPUT_FIELD_TYPES,
  describeType,
  matchesInputType,
  type InputField,
  type InputFieldType,
  type InputSchema,
} from '@stepforge/contract';

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
