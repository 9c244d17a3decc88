import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../src/apiRoutes.js';
import { HTTP_STATUS_OF } from '../src/apiErrors.js';
import { openApiDocument } from '../src/openApiDocument.js';

const COMMITTED = join(import.meta.dirname, '..', '..', '..', 'docs', 'openapi.json');
const copy = () => JSON.parse(JSON.stringify(openApiDocument())) as Record<string, any>;

describe('Function: openApiDocument', () => {
  it('is a valid OpenAPI 3.0 document (swagger-parser validates it against the OpenAPI schema, $refs resolved)', async () => {
    await expect(SwaggerParser.validate(copy() as never)).resolves.toMatchObject({ openapi: '3.0.3' });
  });

  it('is refused by the validator when broken, so the check above can fail', async () => {
    const broken = copy();
    broken.paths['/workflows'].get.responses[200].content['application/json'].schema = { $ref: '#/components/schemas/Nowhere' };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/Nowhere/);
  });

  it('is what docs/openapi.json holds (npx tsx packages/contract/scripts/writeOpenApi.ts writes it)', () => {
    expect(JSON.parse(readFileSync(COMMITTED, 'utf8'))).toEqual(copy());
  });

  it('has an operation for every route, HEAD beside every GET, and the security schemes of every deployment and of serve', () => {
    const doc = copy();
    for (const r of API_ROUTES) {
      expect(doc.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
      if (r.method === 'GET') expect(doc.paths[r.path].head, `HEAD ${r.path}`).toBeDefined();
    }
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'cognito', 'iamSigV4', 'serveToken']);
    expect(doc.security).toEqual([{ iamSigV4: [] }, { apiKey: [] }, { cognito: [] }, { serveToken: [] }]);
  });

  it("documents every status the API answers with (the contract's status table), and 400 on retry", () => {
    const doc = copy();
    const documented = new Set<number>();
    for (const item of Object.values(doc.paths) as Record<string, { responses?: Record<string, unknown> }>[]) {
      for (const op of Object.values(item)) for (const status of Object.keys(op.responses ?? {})) documented.add(Number(status));
    }
    expect([...new Set(Object.values(HTTP_STATUS_OF))].filter((s) => !documented.has(s))).toEqual([]);
    expect(doc.paths['/runs/{id}/retry'].post.responses[400]).toBeDefined();
    expect(doc.paths['/runs/{id}/retry'].post.responses[405]).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
  });
});
