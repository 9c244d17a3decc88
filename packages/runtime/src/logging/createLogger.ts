import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type { Redactor } from '../secrets/Redactor.js';

type FormatterArgs = Parameters<LogFormatter['formatAttributes']>;

/** Powertools' structured layout, with every attribute passed through the Redactor last. */
class RedactingLogFormatter extends LogFormatter {
  readonly #redactor: Redactor;
  constructor(redactor: Redactor) {
    super();
    this.#redactor = redactor;
  }
  formatAttributes(attributes: FormatterArgs[0], additional: FormatterArgs[1]): LogItem {
    const base: Record<string, unknown> = {
      level: attributes.logLevel,
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      // The Lambda context (set per invocation on Lambda; absent embedded), as Powertools names it.
      cold_start: attributes.lambdaContext?.coldStart,
      function_name: attributes.lambdaContext?.functionName,
      function_memory_size: attributes.lambdaContext?.memoryLimitInMB,
      function_arn: attributes.lambdaContext?.invokedFunctionArn,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      xray_trace_id: attributes.xRayTraceId,
    };
    const merged = this.#redactor.redact({ ...base, ...(additional as Record<string, unknown>) });
    return new LogItem({ attributes: merged as never });
  }
}

/** The runtime's structured logger: Powertools Logger, JSON lines, secrets redacted from every line. */
export function createLogger(redactor: Redactor, options: { serviceName?: string; logLevel?: string } = {}): Logger {
  return new Logger({
    serviceName: options.serviceName ?? 'stepforge',
    logLevel: (options.logLevel ?? 'INFO') as never,
    logFormatter: new RedactingLogFormatter(redactor),
  });
}
