// What the Lambda bundles put where the MCP SDK imports `ajv-formats` (see CfworkerAjv.ts): the
// validator there checks `format` itself (date-time, email, uri, uuid, …), so there is nothing to add.
import type CfworkerAjv from './CfworkerAjv.js';

export default function addCfworkerFormats(ajv: CfworkerAjv): CfworkerAjv {
  return ajv;
}
