import { describe, expect, it } from 'vitest';
import { StepforgeError } from '@stepforge/contract';
import { ApiError, apiJson, routeRequest, type ServeBackend, type ServeRequest } from '../src/http/routeRequest.js';

/** A backend that answers every route with what it was asked, recording the calls. */
function backend(options: { openApi?: boolean } = {}) {
  const calls: unknown[][] = [];
  const answer =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return apiJson(name === 'startRun' ? 202 : 200, { route: name, args });
    };
  const b: ServeBackend = {
    ...(options.openApi === false ? {} : { openApi: answer('openApi') }),
    listWorkflows: answer('listWorkflows'),
    startRun: answer('startRun'),
    listRuns: answer('listRuns'),
    getRun: answer('getRun'),
    retry: answer('retry'),
    restart: answer('restart'),
    cancel: answer('cancel'),
    listApprovals: answer('listApprovals'),
    decide: answer('decide'),
  };
  return { b, calls };
}

const request = (method: string, path: string, extra: Partial<ServeRequest> = {}): ServeRequest => ({
  method,
  path,
  query: {},
  headers: {},
  ...extra,
});

describe('Function: routeRequest', () => {
  describe('405 method_not_allowed', () => {
    it('lists the methods the path takes in an Allow header, HEAD wherever GET is', async () => {
      const { b, calls } = backend();
      for (const [method, path, allow] of [
        ['DELETE', '/workflows', 'GET, HEAD'],
        ['PUT', '/workflows/quickstart/runs', 'GET, HEAD, POST'],
        ['GET', '/runs/r-1/cancel', 'POST'],
        ['DELETE', '/runs/r-1', 'GET, HEAD'],
        ['GET', '/approvals/a-1', 'POST'],
        ['POST', '/openapi.json', 'GET, HEAD'],
      ] as const) {
        const r = await routeRequest(b, request(method, path));
        expect({ method, path, status: r.statusCode, headers: r.headers, body: JSON.parse(r.body) }).toEqual({
          method,
          path,
          status: 405,
          headers: { 'content-type': 'application/json', allow },
          body: { error: { code: 'method_not_allowed', message: `${method} is not allowed on ${path}` } },
        });
      }
      expect(calls).toEqual([]);
    });

    it('treats a route the backend does not serve as no route at all (404, no Allow)', async () => {
      const { b } = backend({ openApi: false });
      for (const method of ['GET', 'POST']) {
        const r = await routeRequest(b, request(method, '/openapi.json'));
        expect([r.statusCode, r.headers, JSON.parse(r.body)]).toEqual([
          404,
          { 'content-type': 'application/json' },
          { error: { code: 'not_found', message: `no route for ${method} /openapi.json` } },
        ]);
      }
    });
  });

  describe('HEAD', () => {
    it('answers as GET, with its status, headers and length but no body', async () => {
      const { b, calls } = backend();
      const get = await routeRequest(b, request('GET', '/runs/r-1'));
      const head = await routeRequest(b, request('HEAD', '/runs/r-1'));
      expect(head).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(get.body)) },
        body: '',
      });
      expect(calls).toEqual([
        ['getRun', 'r-1'],
        ['getRun', 'r-1'],
      ]);
    });

    it('answers a POST-only path 405 and an unknown one 404, without a body', async () => {
      const { b, calls } = backend();
      const post = await routeRequest(b, request('HEAD', '/runs/r-1/retry'));
      expect([post.statusCode, post.headers['allow'], post.body]).toEqual([405, 'POST', '']);
      const nowhere = await routeRequest(b, request('HEAD', '/nowhere'));
      expect([nowhere.statusCode, nowhere.body]).toEqual([404, '']);
      expect(calls).toEqual([]);
    });
  });

  describe('POST /workflows/{name}/runs: the idempotency key', () => {
    const start = (body: unknown, headers: Record<string, string> = {}) =>
      request('POST', '/workflows/quickstart/runs', { headers, body: JSON.stringify(body) });

    it('takes the key from the Idempotency-Key header or the body, and both when they are equal', async () => {
      const { b, calls } = backend();
      for (const [body, headers] of [
        [{ idempotencyKey: 'k-1' }, {}],
        [{}, { 'idempotency-key': 'k-1' }],
        [{ idempotencyKey: 'k-1' }, { 'idempotency-key': 'k-1' }],
      ] as const) {
        expect((await routeRequest(b, start(body, headers))).statusCode).toBe(202);
      }
      expect(calls.map((c) => c[3])).toEqual(['k-1', 'k-1', 'k-1']);
    });

    it('refuses a header and a body key that disagree (400 invalid_request), starting nothing', async () => {
      const { b, calls } = backend();
      const r = await routeRequest(b, start({ input: {}, idempotencyKey: 'from-body' }, { 'idempotency-key': 'from-header' }));
      expect([r.statusCode, JSON.parse(r.body)]).toEqual([
        400,
        {
          error: {
            code: 'invalid_request',
            message:
              "the Idempotency-Key header ('from-header') and the body's idempotencyKey ('from-body') disagree: send the key once, in either place",
          },
        },
      ]);
      // A header that is not a key is named as such first.
      const bad = await routeRequest(b, start({ idempotencyKey: 'from-body' }, { 'idempotency-key': '' }));
      expect([bad.statusCode, JSON.parse(bad.body).error]).toEqual([
        400,
        { code: 'invalid_request', message: 'Idempotency-Key header: an idempotency key cannot be empty' },
      ]);
      expect(calls).toEqual([]);
    });
  });
  describe('errors: one wire shape, one status table', () => {
    const failing = (e: unknown) => ({
      ...backend().b,
      getRun: async () => {
        throw e;
      },
    });

    it('answers a StepforgeError by its code, with the status the contract gives it', async () => {
      for (const [code, status] of [
        ['unknown_run', 404],
        ['run_running', 409],
        ['input_too_large', 413],
        ['some_new_refusal', 400],
      ] as const) {
        const r = await routeRequest(
          failing(new StepforgeError(code, `refused: ${code}`, { details: { runId: 'r-1' } })),
          request('GET', '/runs/r-1'),
        );
        expect([r.statusCode, JSON.parse(r.body)]).toEqual([
          status,
          { error: { code, message: `refused: ${code}`, details: { runId: 'r-1' } } },
        ]);
      }
    });

    it('answers an ApiError as it says, and anything else 500 internal, told and redacted', async () => {
      const api = await routeRequest(failing(new ApiError('not_implemented', 'no', undefined, 501)), request('GET', '/runs/r-1'));
      expect([api.statusCode, JSON.parse(api.body)]).toEqual([501, { error: { code: 'not_implemented', message: 'no' } }]);
      const told: unknown[] = [];
      const r = await routeRequest(failing(new TypeError('the key sk-secret leaked')), request('GET', '/runs/r-1'), {
        onInternalError: (e) => told.push(e),
        redact: (t) => t.replace('sk-secret', '***'),
      });
      expect([r.statusCode, JSON.parse(r.body)]).toEqual([500, { error: { code: 'internal', message: 'TypeError: the key *** leaked' } }]);
      expect(told).toHaveLength(1);
    });
  });

  describe('fallback', () => {
    it('is asked for a path no API route has, before the 404, and never for an API path', async () => {
      const { b } = backend();
      const asked: string[] = [];
      const fallback = async (req: ServeRequest) => {
        asked.push(`${req.method} ${req.path}`);
        return req.path === '/ui' ? { statusCode: 200, headers: { 'content-type': 'text/html' }, body: '<html></html>' } : undefined;
      };
      expect(await routeRequest(b, request('GET', '/ui'), { fallback })).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'text/html' },
        body: '<html></html>',
      });
      expect((await routeRequest(b, request('GET', '/elsewhere'), { fallback })).statusCode).toBe(404);
      expect((await routeRequest(b, request('DELETE', '/workflows'), { fallback })).statusCode).toBe(405);
      expect(asked).toEqual(['GET /ui', 'GET /elsewhere']);
    });
  });
});
