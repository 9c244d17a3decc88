import { StepEnvelope } from '@stepforge/contract';
import * as z from 'zod';
import { userStackFrames } from '../errors/userStackFrames.js';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import type { Runtime } from '../runtime/Runtime.js';
import { defineMiddleware } from './defineMiddleware.js';

const runtimeOption = z.custom<Runtime>((v) => typeof v === 'object' && v !== null && 'config' in v && 'redactor' in v, 'a Runtime');

/**
 * Validates the step envelope with the compiler's zod schema. An oversized or malformed payload
 * fails with `InvalidEnvelope` before any work. A `taskToken` next to the envelope (state invoked
 * with `.waitForTaskToken`) is moved to the context.
 */
export const validateEnvelope = defineMiddleware(
  'validateEnvelope',
  z.object({ runtime: runtimeOption, maxBytes: z.number().int().positive().optional() }),
  ({ runtime, maxBytes }) => ({
    before: (request) => {
      const limit = maxBytes ?? runtime.config.maxEnvelopeBytes;
      const raw = request.event as Record<string, unknown> | undefined;
      const size = Buffer.byteLength(JSON.stringify(raw ?? null) ?? '');
      if (size > limit) {
        throw new RuntimeError('InvalidEnvelope', `step envelope is ${size} bytes, over the ${limit}-byte limit`, {
          details: { bytes: size, limit },
        });
      }
      if (raw !== null && typeof raw === 'object' && typeof raw.taskToken === 'string') {
        request.context.stepforgeTaskToken = raw.taskToken;
      }
      const parsed = StepEnvelope.safeParse(raw);
      if (!parsed.success) {
        const issues = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(envelope)'}: ${i.message}`);
        throw new RuntimeError('InvalidEnvelope', `malformed step envelope: ${issues.join('; ')}`, { details: { issues } });
      }
      request.event = parsed.data;
    },
  }),
);

/** Powertools' numeric threshold of INFO: a logger whose `level` is above it drops info lines. */
const INFO_LEVEL = 12;

/** Structured logging with the run and step ids on every line (Powertools logger, redacted). */
export const logStep = defineMiddleware(
  'logStep',
  z.object({ runtime: runtimeOption, handler: z.string().min(1) }),
  ({ runtime, handler }) => {
    // Embedded, many invocations of one handler run concurrently in one process (Parallel branches,
    // Map iterations), so the keys and the start time belong to the request, never to the shared
    // logger or this closure: each request gets its own child logger. A child costs a Logger and a
    // Console, so it is made only when the request writes a line (at the default WARN, on errors).
    interface RequestLog {
      readonly raw: unknown;
      readonly awsRequestId?: string;
      readonly started: number;
      log?: typeof runtime.logger;
    }
    const perRequest = new WeakMap<object, RequestLog>();
    const childOf = (r: RequestLog) => {
      if (r.log) return r.log;
      const log = runtime.logger.createChild();
      // The ids of the event as it arrived, so even a refused envelope is logged with whatever ids it carries.
      const e = (r.raw !== null && typeof r.raw === 'object' ? r.raw : {}) as {
        run?: { id?: unknown; workflow?: unknown };
        step?: { id?: unknown; kind?: unknown; iteration?: unknown };
      };
      log.appendKeys({
        handler,
        ...(e.run && typeof e.run === 'object' ? { runId: String(e.run.id), workflow: String(e.run.workflow) } : {}),
        ...(e.step && typeof e.step === 'object'
          ? { stepId: String(e.step.id), stepKind: String(e.step.kind), iteration: e.step.iteration }
          : {}),
        ...(r.awsRequestId ? { requestId: r.awsRequestId } : {}),
      });
      return (r.log = log);
    };
    const stateOf = (request: object): RequestLog =>
      perRequest.get(request) ?? { raw: undefined, started: Date.now(), log: runtime.logger };
    return {
      before: (request) => {
        const r: RequestLog = {
          raw: request.event,
          started: Date.now(),
          ...(request.context.awsRequestId ? { awsRequestId: request.context.awsRequestId } : {}),
        };
        perRequest.set(request, r);
        if (runtime.logger.level <= INFO_LEVEL) childOf(r).info('step started');
      },
      after: (request) => {
        const r = stateOf(request);
        if (runtime.logger.level <= INFO_LEVEL) childOf(r).info('step finished', { durationMs: Date.now() - r.started });
        runtime.telemetry.addMetric('StepsSucceeded', 1);
        const usage = (request.response as { usage?: { inputTokens?: unknown; outputTokens?: unknown } } | undefined)?.usage;
        if (typeof usage?.inputTokens === 'number') runtime.telemetry.addMetric('ModelInputTokens', usage.inputTokens);
        if (typeof usage?.outputTokens === 'number') runtime.telemetry.addMetric('ModelOutputTokens', usage.outputTokens);
      },
      onError: (request) => {
        const err = request.error;
        const r = stateOf(request);
        runtime.telemetry.addMetric('StepErrors', 1);
        const fields = {
          errorName: err?.name,
          errorMessage: err?.message,
          durationMs: Date.now() - r.started,
          ...(isRuntimeError(err) && err.details ? { details: err.details } : {}),
        };
        // Embedded, a named failure (a user function that threw, a refused call…) is the run's to
        // tell: its record, its history and the CLI's display carry it, so a log line on stderr
        // would only repeat it. On AWS, CloudWatch is where it is read; and a failure with no
        // name of ours is a bug wherever it happens.
        if (runtime.config.mode === 'embedded' && isRuntimeError(err)) childOf(r).info('step failed', fields);
        else childOf(r).error('step failed', fields);
      },
    };
  },
);

/** The properties of an error redactSecrets builds again rather than copies. */
const REBUILT = new Set(['name', 'message', 'stack', 'details', 'retryable', 'cause', 'stackTrace']);

/**
 * Last line of defence for secrets: redacts the response and the error (message, details, trace —
 * all end up in the execution history), keeping the error's `name` so ASL Retry/Catch still match.
 * The error's trace becomes the user's own frames only (a Python function's, or a JavaScript
 * function's frames in the functions folder, relative to it): no path of this installation is stored.
 */
export const redactSecrets = defineMiddleware('redactSecrets', z.object({ runtime: runtimeOption }), ({ runtime }) => ({
  after: (request) => {
    request.response = runtime.redactor.redact(request.response);
  },
  onError: (request) => {
    const err = request.error;
    if (!err) return;
    const { redactor } = runtime;
    const message = redactor.redactText(err.message);
    const given = (err as { stackTrace?: unknown }).stackTrace;
    const cause = (err as { cause?: { stack?: unknown } }).cause;
    const frames = Array.isArray(given)
      ? given.map(String)
      : userStackFrames(typeof cause?.stack === 'string' ? cause.stack : err.stack, runtime.config.userFunctionsDir);
    const trace = redactor.redact(frames);
    const copy = isRuntimeError(err)
      ? new RuntimeError(err.name, message, {
          details: redactor.redact(err.details as Record<string, unknown> | undefined),
          retryable: err.retryable,
        })
      : Object.assign(new Error(message), { name: err.name });
    // What else the error says of itself (the runtime that raised it, its Lambda error type) stays, redacted.
    const own = Object.fromEntries(Object.entries(err).filter(([k]) => !REBUILT.has(k)));
    copy.stack = [`${err.name}: ${message}`, ...trace.map((f) => `    ${f}`)].join('\n');
    request.error = Object.assign(copy, redactor.redact(own), { stackTrace: trace });
  },
}));
