// The fields a schema defines for the mapping at a data path, so an unknown field's warning can say
// which one was probably meant (`input_templte` → `input_template`). zod's unrecognized_keys issue
// names only the unknown keys; the candidates depend on where it is (a step's kind picks its fields).
import type { z } from 'zod';

/** The parts of zod's schema definitions this walk reads. */
interface Def {
  readonly type: string;
  readonly shape?: Readonly<Record<string, z.core.$ZodType>>;
  readonly element?: z.core.$ZodType;
  readonly valueType?: z.core.$ZodType;
  readonly innerType?: z.core.$ZodType;
  readonly in?: z.core.$ZodType;
  readonly getter?: () => z.core.$ZodType;
  readonly options?: readonly z.core.$ZodType[];
  readonly discriminator?: string;
  readonly values?: readonly unknown[];
}

const defOf = (s: z.core.$ZodType): Def => s._zod.def as unknown as Def;

/** The field names `schema` defines for the mapping at `path` of `data`; empty when it is not a fixed set. */
export function knownFields(schema: z.core.$ZodType, data: unknown, path: readonly PropertyKey[]): string[] {
  let s: z.core.$ZodType | undefined = unwrap(schema, data);
  let d = data;
  for (const seg of path) {
    if (!s) return [];
    const def = defOf(s);
    if (def.type === 'object') s = def.shape?.[seg as string];
    else if (def.type === 'array') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else return [];
    d = d !== null && typeof d === 'object' ? (d as Record<PropertyKey, unknown>)[seg] : undefined;
    s = s && unwrap(s, d);
  }
  const def = s && defOf(s);
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** The schema a value of `data` is checked against: through optional, default, lazy and unions. */
function unwrap(schema: z.core.$ZodType, data: unknown): z.core.$ZodType | undefined {
  let s: z.core.$ZodType | undefined = schema;
  for (let guard = 0; s && guard < 32; guard++) {
    const def = defOf(s);
    if (def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else if (def.type === 'lazy' && def.getter) s = def.getter();
    else if (def.type === 'union' && def.options) s = pickOption(def, data);
    else return s;
  }
  return s;
}

/** A discriminated union's option for the data's discriminator, else a union's only mapping option. */
function pickOption(def: Def, data: unknown): z.core.$ZodType | undefined {
  const options = def.options ?? [];
  if (def.discriminator !== undefined) {
    const tag = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[def.discriminator] : undefined;
    return options.find((o) => defOf(defOf(o).shape?.[def.discriminator!] ?? o).values?.includes(tag));
  }
  const objects = options.filter((o) => defOf(o).type === 'object');
  return objects.length === 1 ? objects[0] : undefined;
}
