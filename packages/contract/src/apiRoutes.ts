// The routes of the Stepforge HTTP API, once: `stepforge serve` and the API Gateway Lambda route by
// this table (packages/runtime/src/http/routeRequest.ts), API Gateway's resources and the OpenAPI document
// are derived from it. A route names its operation; each place that serves the API implements the
// operations (the run service's backend does, for both).
import { API_BODIES } from './apiBodies.js';

/** The operations of the API, by name. */
export type ApiOperation =
  'openApi' | 'listWorkflows' | 'startRun' | 'listRuns' | 'getRun' | 'retry' | 'restart' | 'cancel' | 'listApprovals' | 'decide';

/** Run statuses a `?status=` filter takes. */
export const RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;
/** Approval statuses a `?status=` filter takes. */
export const APPROVAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'] as const;

/** One route. */
export interface ApiRoute {
  readonly operation: ApiOperation;
  readonly method: 'GET' | 'POST';
  /** The path, with `{name}` parameters (OpenAPI's and API Gateway's notation). */
  readonly path: string;
  /** The request body's schema (a key of API_BODIES). */
  readonly body?: keyof typeof API_BODIES;
  /** The statuses a `?status=` filter may name. */
  readonly statusQuery?: readonly string[];
  /** What the route does, for the OpenAPI document. */
  readonly summary: string;
}

/** Every route. */
export const API_ROUTES: readonly ApiRoute[] = [
  { operation: 'openApi', method: 'GET', path: '/openapi.json', summary: 'This API as an OpenAPI document' },
  { operation: 'listWorkflows', method: 'GET', path: '/workflows', summary: 'The workflows runs can be started of' },
  {
    operation: 'startRun',
    method: 'POST',
    path: '/workflows/{name}/runs',
    body: 'StartRunBody',
    summary: 'Start a run (idempotent by key)',
  },
  {
    operation: 'listRuns',
    method: 'GET',
    path: '/workflows/{name}/runs',
    statusQuery: RUN_STATUSES,
    summary: "A workflow's runs, newest first",
  },
  { operation: 'getRun', method: 'GET', path: '/runs/{id}', summary: 'A run with its steps and events' },
  {
    operation: 'retry',
    method: 'POST',
    path: '/runs/{id}/retry',
    body: 'RetryBody',
    summary: "A new run that re-runs only the run's unfinished steps",
  },
  {
    operation: 'restart',
    method: 'POST',
    path: '/runs/{id}/restart',
    body: 'RestartBody',
    summary: 'A new run that re-runs a step and everything downstream of it',
  },
  { operation: 'cancel', method: 'POST', path: '/runs/{id}/cancel', body: 'CancelBody', summary: 'Stop a running run' },
  {
    operation: 'listApprovals',
    method: 'GET',
    path: '/approvals',
    statusQuery: APPROVAL_STATUSES,
    summary: 'Approvals (by default the pending ones of running runs)',
  },
  { operation: 'decide', method: 'POST', path: '/approvals/{id}', body: 'DecisionBody', summary: 'Approve or reject a pending approval' },
];
