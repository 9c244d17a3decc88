// The OpenAPI 3 description of the Stepforge HTTP API, served at GET /openapi.json and checked in
// as docs/openapi.json (a test keeps the two equal). Request bodies come from the zod schemas both
// the embedded routes and the AWS API handler validate with (API_BODIES), so
// the document cannot drift from the code.
import * as z from 'zod';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './runStart.js';
import { API_BODIES } from './apiBodies.js';

const { StartRunBody, RestartBody, RetryBody, CancelBody, DecisionBody } = API_BODIES;

// zod's own output for OpenAPI 3.0 (nullable rather than type lists, no $schema).
const schema = (s: z.ZodType) => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, { target: 'openapi-3.0' }) as Record<string, unknown>;
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const body = (name: string, required = true) => ({ required, content: { 'application/json': { schema: ref(name) } } });
const ok = (description: string, schemaName: string) => ({ description, content: { 'application/json': { schema: ref(schemaName) } } });
const err = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const idParam = (name: string, description: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description });
const common = (name: string) => ({ $ref: `#/components/responses/${name}` });
/** What any operation may answer besides its own: the caller is not let in, another method, a failure of ours. */
const COMMON = { 401: common('Unauthorized'), 403: common('Forbidden'), 405: common('MethodNotAllowed'), 500: common('Internal') };
/** What any POST may answer too: a body over the size API Gateway accepts. */
const COMMON_POST = { ...COMMON, 413: common('PayloadTooLarge') };
/** A `wait: true` request held while `stepforge serve` stops. */
const STACK_CLOSED = {
  503: err('stepforge serve stopped while the request waited for the run (stack_closed); the run goes on when serve starts again'),
};
/** HEAD: what GET answers, without the body. */
const head = (operationId: string, statuses: readonly number[]) => ({
  operationId,
  summary: 'As GET, without the body',
  responses: Object.fromEntries([
    ...statuses.map((s) => [s, { description: `As GET's ${s}, without the body` }]),
    ...Object.entries(COMMON),
  ]),
});

/** The document's value (see openApiDocument). */
const buildDocument = () =>
  ({
    openapi: '3.0.3',
    info: {
      title: 'Stepforge API',
      version: '0.1.0',
      description:
        'Start and inspect workflow runs, fork them, and decide approvals. Served by API Gateway on AWS and by `stepforge serve` locally. `stepforge serve` answers 403 (`host_not_allowed`, `origin_not_allowed`) to any request whose Host header is not a loopback name or whose Origin is a page not served from loopback: what a web page of another site sends through the browser, directly or by DNS rebinding. `stepforge serve` answers a method a path does not take 405 `method_not_allowed` with an `Allow` header listing the methods it takes, and HEAD as GET without the body (on AWS, API Gateway answers a method it has no route for itself).',
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'stepforge serve (default port)' }],
    // Any one of these lets a caller in: the deployed API takes the one it was deployed with, serve its own token.
    security: [{ iamSigV4: [] }, { apiKey: [] }, { cognito: [] }, { serveToken: [] }],
    paths: {
      '/workflows': {
        get: {
          operationId: 'listWorkflows',
          summary: 'The workflows that can be run',
          responses: { 200: ok('Workflows', 'WorkflowList'), ...COMMON },
        },
        head: head('headWorkflows', [200]),
      },
      '/workflows/{name}/runs': {
        parameters: [idParam('name', 'Workflow name')],
        post: {
          operationId: 'startRun',
          summary: 'Start a run; the same Idempotency-Key returns the same run',
          description: `The idempotency key is the \`Idempotency-Key\` header or the body's \`idempotencyKey\` (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters). Send it once, in either place; both is accepted when they are equal, and two different keys are refused (400 \`invalid_request\`) rather than one of them used.`,
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
              description: "The run's idempotency key, as the body's `idempotencyKey` (either; both only when equal)",
            },
          ],
          requestBody: body('StartRunBody', false),
          responses: {
            200: ok('Finished run (wait: true), or the existing run for the idempotency key', 'RunStarted'),
            202: ok('Run started', 'RunStarted'),
            400: err(
              "Invalid body, an Idempotency-Key header that is not a key or that disagrees with the body's idempotencyKey (invalid_request), input not matching the workflow input schema (invalid_input), or input nested more than 32 levels deep (input_too_deep)",
            ),
            404: err('Unknown workflow (unknown_workflow)'),
            409: err('The idempotency key names a run of another workflow (idempotency_key_conflict)'),
            ...COMMON_POST,
            413: err(
              "The input is over Step Functions' 256 KiB execution input limit (input_too_large), or the body over 10 MiB (request_too_large); no run is recorded",
            ),
            ...STACK_CLOSED,
          },
        },
        get: {
          operationId: 'listRuns',
          summary: 'Runs of a workflow, newest first',
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] },
            },
          ],
          responses: {
            200: ok('Runs', 'RunList'),
            400: err('A status no run can have (invalid_request)'),
            404: err('Unknown workflow (unknown_workflow)'),
            ...COMMON,
          },
        },
        head: head('headRuns', [200, 400, 404]),
      },
      '/runs/{id}': {
        parameters: [idParam('id', 'Run id')],
        get: {
          operationId: 'getRun',
          summary: 'A run with its steps',
          responses: { 200: ok('Run', 'RunDetails'), 404: err('Unknown run (unknown_run)'), ...COMMON },
        },
        head: head('headRun', [200, 404]),
      },
      '/runs/{id}/retry': {
        parameters: [idParam('id', 'Run id')],
        post: {
          operationId: 'retryRun',
          summary: 'Fork: re-run only the steps that did not finish',
          requestBody: body('RetryBody', false),
          responses: {
            200: ok('Finished fork (wait: true)', 'Fork'),
            202: ok('Fork started', 'Fork'),
            400: err('Invalid body (invalid_json, invalid_request)'),
            404: err('Unknown run (unknown_run)'),
            409: err(
              'The run is still running (run_running), or ran another version of its workflow than the one registered now (workflow_changed)',
            ),
            ...COMMON_POST,
            ...STACK_CLOSED,
          },
        },
      },
      '/runs/{id}/restart': {
        parameters: [idParam('id', 'Run id')],
        post: {
          operationId: 'restartRun',
          summary: 'Fork: re-run a step and everything downstream, reusing the rest',
          requestBody: body('RestartBody'),
          responses: {
            200: ok('Finished fork (wait: true)', 'Fork'),
            202: ok('Fork started', 'Fork'),
            400: err('Invalid body or unknown step (invalid_request, unknown_step)'),
            404: err('Unknown run (unknown_run)'),
            409: err(
              'The run is still running (run_running), or ran another version of its workflow than the one registered now (workflow_changed)',
            ),
            ...COMMON_POST,
            ...STACK_CLOSED,
          },
        },
      },
      '/runs/{id}/cancel': {
        parameters: [idParam('id', 'Run id')],
        post: {
          operationId: 'cancelRun',
          summary: 'Stop a running run',
          requestBody: body('CancelBody', false),
          responses: {
            200: ok('The run', 'RunStatus'),
            400: err('Invalid body (invalid_request)'),
            404: err('Unknown run (unknown_run)'),
            409: err('The run has no execution yet: its starter is starting it (run_not_started)'),
            ...COMMON_POST,
          },
        },
      },
      '/approvals': {
        get: {
          operationId: 'listApprovals',
          summary: 'Tool calls waiting for a human',
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'] },
            },
          ],
          responses: { 200: ok('Approvals', 'ApprovalList'), 400: err('A status no approval can have (invalid_request)'), ...COMMON },
        },
        head: head('headApprovals', [200, 400]),
      },
      '/approvals/{id}': {
        parameters: [idParam('id', 'Approval id')],
        post: {
          operationId: 'decideApproval',
          summary: 'Approve or reject',
          requestBody: body('DecisionBody'),
          responses: {
            200: ok('The decided approval', 'Approval'),
            400: err('Invalid body (invalid_request)'),
            404: err('Unknown approval (unknown_approval)'),
            409: err('Already decided (approval_decided), or its run has ended (run_ended)'),
            ...COMMON_POST,
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openApi',
          summary: 'This document (stepforge serve)',
          responses: { 200: { description: 'OpenAPI 3 document' }, ...COMMON },
        },
        head: head('headOpenApi', [200]),
      },
    },
    components: {
      securitySchemes: {
        iamSigV4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description:
            'The deployed API with auth iam (the default): requests signed with AWS Signature Version 4 (service execute-api) by a principal allowed execute-api:Invoke',
          'x-amazon-apigateway-authtype': 'awsSigv4',
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'The deployed API with auth apiKey: the API key of its usage plan',
        },
        cognito: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "The deployed API with auth cognito: an ID token of the stack's Cognito user pool, in the Authorization header",
        },
        serveToken: {
          type: 'http',
          scheme: 'bearer',
          description: "stepforge serve: apiToken from the project's .stepforge/stack.json (a new one each time serve starts)",
        },
      },
      responses: {
        Unauthorized: {
          description: 'No credentials, or not these (stepforge serve: unauthorized, with WWW-Authenticate: Bearer)',
          content: { 'application/json': { schema: ref('Error') } },
        },
        Forbidden: {
          description:
            'stepforge serve: a Host that is not a loopback name or an Origin not served from loopback (host_not_allowed, origin_not_allowed); the deployed API: credentials not allowed',
          content: { 'application/json': { schema: ref('Error') } },
        },
        MethodNotAllowed: {
          description: 'A method the path does not take (method_not_allowed)',
          headers: { Allow: { description: 'The methods the path takes (HEAD wherever GET is)', schema: { type: 'string' } } },
          content: { 'application/json': { schema: ref('Error') } },
        },
        PayloadTooLarge: {
          description: 'The body is over 10 MiB, the most API Gateway accepts (request_too_large)',
          content: { 'application/json': { schema: ref('Error') } },
        },
        Internal: { description: 'A failure of the service (internal)', content: { 'application/json': { schema: ref('Error') } } },
      },
      schemas: {
        StartRunBody: schema(StartRunBody),
        RestartBody: schema(RestartBody),
        RetryBody: schema(RetryBody),
        CancelBody: schema(CancelBody),
        DecisionBody: schema(DecisionBody),
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
            },
          },
        },
        RunStarted: {
          type: 'object',
          required: ['runId', 'status', 'reused'],
          properties: {
            runId: { type: 'string' },
            status: { type: 'string' },
            reused: { type: 'boolean' },
            output: {},
            inputDiffers: {
              type: 'boolean',
              enum: [true],
              description:
                'Present when the idempotency key names an earlier run that was started with another input; that run is returned as it ran',
            },
          },
        },
        RunStatus: { type: 'object', required: ['runId', 'status'], properties: { runId: { type: 'string' }, status: { type: 'string' } } },
        Fork: {
          type: 'object',
          required: ['runId', 'parentRunId', 'status'],
          properties: {
            runId: { type: 'string' },
            parentRunId: { type: 'string' },
            status: { type: 'string' },
            output: {},
            rerun: { type: 'array', items: { type: 'string' } },
          },
        },
        RunSummary: {
          type: 'object',
          properties: {
            runId: { type: 'string' },
            workflow: { type: 'string', description: "The workflow name (its state machine's)" },
            displayName: { type: 'string', description: "The workflow's name as its document writes it (document.name)" },
            status: { type: 'string' },
            startedAt: { type: 'string' },
            endedAt: { type: 'string', nullable: true },
            idempotencyKey: { type: 'string', nullable: true },
            parentRunId: { type: 'string', nullable: true },
          },
        },
        RunList: { type: 'object', properties: { runs: { type: 'array', items: ref('RunSummary') } } },
        RunDetails: {
          type: 'object',
          properties: {
            run: ref('RunSummary'),
            steps: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  kind: { type: 'string' },
                  parent: { type: 'string', nullable: true },
                  status: { type: 'string', enum: ['pending', 'running', 'succeeded', 'failed', 'skipped'] },
                  reused: { type: 'boolean' },
                  startedAt: { type: 'string', nullable: true },
                  endedAt: { type: 'string', nullable: true },
                  durationMs: { type: 'number', nullable: true },
                  tokens: { type: 'object', properties: { input: { type: 'integer' }, output: { type: 'integer' } } },
                  error: { nullable: true },
                  output: {
                    type: 'string',
                    description:
                      "A succeeded step without records (a conditional, a loop, a Contenox noop or route task): its output as its states assigned it, truncated as the records' are. Absent otherwise.",
                  },
                  records: { type: 'array', items: { type: 'object' } },
                },
              },
            },
            historyEvents: { type: 'integer' },
            events: {
              type: 'array',
              description:
                "The run's audit events, oldest first: refused tool calls (ToolNotGranted, PolicyDenied, UnknownTool), approvals asked and decided, the fork it is.",
              items: {
                type: 'object',
                properties: {
                  at: { type: 'string' },
                  type: { type: 'string' },
                  stepId: { type: 'string', nullable: true },
                  detail: { nullable: true },
                },
              },
            },
          },
        },
        WorkflowList: {
          type: 'object',
          properties: {
            workflows: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  displayName: { type: 'string' },
                  file: { type: 'string', nullable: true },
                  format: { type: 'string' },
                  steps: { type: 'array', items: { type: 'string' } },
                  input: { type: 'array', items: { type: 'object' } },
                },
              },
            },
          },
        },
        Approval: {
          type: 'object',
          properties: {
            approvalId: { type: 'string' },
            runId: { type: 'string' },
            stepId: { type: 'string' },
            tool: { type: 'string' },
            args: {},
            status: { type: 'string', enum: ['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'] },
            createdAt: { type: 'string' },
            expiresAt: { type: 'string' },
            decidedAt: { type: 'string' },
            decidedBy: { type: 'string' },
            reason: { type: 'string' },
          },
        },
        ApprovalList: { type: 'object', properties: { approvals: { type: 'array', items: ref('Approval') } } },
      },
    },
  }) as const;

let built: ReturnType<typeof buildDocument> | undefined;

/**
 * The OpenAPI 3.0 document, built on first use: its request bodies are zod's JSON Schema output,
 * which every command that loads the contract (`validate` as much as `serve`) would otherwise
 * compute as it starts, for a document only `serve` answers.
 */
export function openApiDocument(): ReturnType<typeof buildDocument> {
  return (built ??= buildDocument());
}
