import { matchesInputType, type InputFieldType, type InputSchema } from './InputSchema.js';

/** An `input:` field whose declared default does not have the declared type. */
export interface InputDefaultMismatch {
  readonly field: string;
  readonly type: InputFieldType;
  /** The message both front-ends report, at the `default:` value. */
  readonly message: string;
}

/**
 * The fields of `schema` whose default does not match their declared type. Run-start validation
 * applies defaults without re-checking them, so a wrong default must be refused when the document
 * is loaded; chain and DSL documents share the `input:` schema, hence one check and one message.
 */
export function checkInputDefaults(schema: InputSchema): InputDefaultMismatch[] {
  const out: InputDefaultMismatch[] = [];
  for (const f of schema.fields) {
    if (f.hasDefault && !matchesInputType(f.type, f.default)) {
      out.push({ field: f.name, type: f.type, message: `input.${f.name}: the default does not match the declared type ${f.type}` });
    }
  }
  return out;
}
