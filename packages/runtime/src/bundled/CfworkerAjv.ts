// What the Lambda bundles put where the MCP SDK imports `ajv` (infra/lib/bundling/handlerBundling.ts
// aliases it here). The runtime gives every MCP client its own validator (McpClientPool), so the
// SDK's default one, built over ajv, is never constructed; but its module is imported all the same,
// and ajv with its formats and URI parser is over 130 KiB of every handler that reaches MCP. This
// is the part of Ajv's interface the SDK's default validator calls, over the same validator the
// runtime uses: should a client ever be made without one, its tool outputs are still checked.
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';

/** A compiled schema as Ajv gives it: call it, then read `errors`. */
export interface CompiledSchema {
  (data: unknown): boolean;
  errors: OutputUnit[] | null;
}

export default class CfworkerAjv {
  readonly #byId = new Map<string, CompiledSchema>();

  /** Ajv's options are accepted and not needed: formats and every error are always on here. */
  constructor(_options?: unknown) {}

  compile(schema: Schema): CompiledSchema {
    const validator = new Validator(schema, '2020-12', false);
    const check = ((data: unknown) => {
      const r = validator.validate(data);
      check.errors = r.valid ? null : r.errors;
      return r.valid;
    }) as CompiledSchema;
    check.errors = null;
    if (typeof schema.$id === 'string') this.#byId.set(schema.$id, check);
    return check;
  }

  getSchema(id: string): CompiledSchema | undefined {
    return this.#byId.get(id);
  }

  errorsText(errors: readonly OutputUnit[] | null | undefined): string {
    if (!errors || errors.length === 0) return 'No errors';
    return errors.map((e) => `${e.instanceLocation} ${e.error}`).join(', ');
  }
}
