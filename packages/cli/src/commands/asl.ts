import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandArgs } from './parseCommandArgs.js';
import { SourceText, StepforgeError } from '@stepforge/compiler';
import { ExecutionManager, defaultEngine, isSfnApiError, type LambdaHandlers } from '@stepforge/engine';
import { loadFunctionsRuntime } from '@stepforge/embedded';
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { isStdinInput, readStdinText } from '../readInput.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.asl;

const HELP = `Usage: stepforge asl run DEFINITION.json [options]

Runs a raw ASL definition in the embedded engine and prints
{"status","output","error","cause"} (plus "history" with --history).

Options:
  --input JSON|@FILE|-          execution input (default {}; - or @- reads standard input)
  --handlers MODULE             ES module whose default export maps Lambda names/ARNs to async handlers
  --history                     include the execution history events
  --state-machine-name NAME     (default: the file name) shown in ARNs and the context object
  --execution-name NAME         (default: a UUID)
  --account ACCOUNT             (default 123456789012)
  --region REGION               (default us-east-1)
  --sqs-endpoint URL            SQS endpoint for sqs:sendMessage tasks
  --dynamodb-endpoint URL       DynamoDB endpoint for dynamodb:* tasks
  --substitution NAME=VALUE     replace \${NAME} in the definition (repeatable)

Exit status: 0 when the execution succeeds, 1 when it fails or the input is invalid, 2 on usage errors.
`;

/** `stepforge asl run`: one raw ASL definition through the embedded engine. */
const asl: Command = {
  name: 'asl',
  summary: SUMMARY,
  usage: USAGE,
  help: HELP,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const [sub, ...rest] = argv;
    if (sub === '--help' || sub === '-h' || sub === 'help') {
      io.out(HELP);
      return EXIT_OK;
    }
    if (sub !== 'run')
      throw new UsageError(
        sub === undefined
          ? `missing sub-command. Usage: stepforge ${USAGE}`
          : `unknown sub-command 'asl ${sub}'. Usage: stepforge ${USAGE}`,
      );
    return runAsl(rest, io);
  },
};
export default asl;

async function runAsl(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      input: { type: 'string' },
      handlers: { type: 'string' },
      history: { type: 'boolean', default: false },
      'state-machine-name': { type: 'string' },
      'execution-name': { type: 'string' },
      account: { type: 'string' },
      region: { type: 'string' },
      'sqs-endpoint': { type: 'string' },
      'dynamodb-endpoint': { type: 'string' },
      substitution: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(HELP);
    return EXIT_OK;
  }
  if (positionals.length !== 1)
    throw new UsageError(`expected exactly one DEFINITION.json, got ${positionals.length}. Usage: stepforge ${USAGE}`);
  const file = positionals[0]!;
  if (values.account !== undefined && !/^\d{12}$/.test(values.account))
    throw new UsageError(`--account must be 12 digits, got '${values.account}'`);
  if (values.region !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(values.region))
    throw new UsageError(`--region must look like us-east-1, got '${values.region}'`);
  const substitutions: Record<string, string> = {};
  for (const s of values.substitution ?? []) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new UsageError(`--substitution must be NAME=VALUE, got '${s}'`);
    substitutions[s.slice(0, eq)] = s.slice(eq + 1);
  }

  const definitionPath = resolve(io.cwd, file);
  const definitionText = await readText(definitionPath, file, 'definition');
  parseJson(definitionText, file, 'invalid_definition', 'the definition');
  const input = await readInput(values.input, io);
  const handlers = values.handlers !== undefined ? await loadHandlers(resolve(io.cwd, values.handlers), values.handlers) : {};

  const engine = await defaultEngine(handlers);
  const manager = new ExecutionManager({
    execute: engine.execute,
    ...(engine.validate ? { validate: engine.validate } : {}),
    ...(engine.lambda ? { lambda: engine.lambda } : {}),
    substitutions,
    sqs:
      values['sqs-endpoint'] !== undefined
        ? { endpoint: values['sqs-endpoint'], region: values.region ?? 'us-east-1' }
        : { region: values.region ?? 'us-east-1' },
    dynamodb:
      values['dynamodb-endpoint'] !== undefined
        ? { endpoint: values['dynamodb-endpoint'], region: values.region ?? 'us-east-1' }
        : { region: values.region ?? 'us-east-1' },
    ...(values.region !== undefined ? { region: values.region } : {}),
    ...(values.account !== undefined ? { account: values.account } : {}),
  });
  try {
    const smName = values['state-machine-name'] ?? defaultMachineName(file);
    let smArn: string;
    let executionArn: string;
    try {
      smArn = String(manager.createStateMachine({ name: smName, definition: definitionText }).stateMachineArn);
      executionArn = String(
        manager.startExecution({
          stateMachineArn: smArn,
          input: input.text,
          ...(values['execution-name'] !== undefined ? { name: values['execution-name'] } : {}),
        }).executionArn,
      );
    } catch (e) {
      throw toStepforgeError(e, file, definitionText);
    }
    const result = await manager.waitForExecution(executionArn);
    const report: Record<string, unknown> = {
      status: result.status,
      output: result.output !== undefined ? JSON.parse(result.output) : null,
      error: result.error ?? null,
      cause: result.cause ?? null,
    };
    if (values.history) {
      report.history = manager.events(executionArn).map((e) => ({ ...e, timestamp: new Date(e.timestamp).toISOString() }));
    }
    io.out(JSON.stringify(report, null, io.isTTY ? 2 : undefined) + '\n');
    return result.status === 'SUCCEEDED' ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await manager.close();
  }
}

/** A state machine name from the file name: `flows/order.asl.json` → `order`. */
function defaultMachineName(file: string): string {
  const base = basename(file)
    .replace(/(\.asl)?\.json$/i, '')
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 80);
  return base === '' ? 'asl-run' : base;
}

async function readText(path: string, shown: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new StepforgeError('file_not_found', `cannot read the ${what} file '${shown}'${code ? ` (${code})` : ''}`, {
      location: { file: shown, line: 1, column: 1 },
    });
  }
}

async function readInput(raw: string | undefined, io: CliIo): Promise<{ text: string }> {
  if (raw === undefined) return { text: '{}' };
  if (isStdinInput(raw)) {
    const text = readStdinText(io.stdin);
    parseJson(text, '<stdin>', 'invalid_input', 'the input');
    return { text };
  }
  if (raw.startsWith('@')) {
    const shown = raw.slice(1);
    const text = await readText(resolve(io.cwd, shown), shown, 'input');
    parseJson(text, shown, 'invalid_input', 'the input');
    return { text };
  }
  parseJson(raw, '<--input>', 'invalid_input', '--input');
  return { text: raw };
}

/** JSON.parse with a located, named error (`invalid_definition` / `invalid_input`). */
function parseJson(text: string, file: string, code: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    const m = /position (\d+)/.exec(message);
    const source = new SourceText(text, file);
    const { line, column } = source.position(m ? Number(m[1]) : Math.max(0, text.length - 1));
    throw new StepforgeError(code, `${what} is not valid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`, {
      location: { file, line, column },
      source,
    });
  }
}

async function loadHandlers(path: string, shown: string): Promise<LambdaHandlers> {
  let mod: { default?: unknown };
  try {
    // Through the runtime's importFile, which the CLI's bundle routes through its launcher.
    mod = await (await loadFunctionsRuntime()).importFile(pathToFileURL(path).href);
  } catch (e) {
    throw new StepforgeError('invalid_handlers', `cannot load the handlers module '${shown}': ${(e as Error).message}`, {
      location: { file: shown, line: 1, column: 1 },
    });
  }
  const handlers = mod.default;
  if (handlers === null || typeof handlers !== 'object' || Array.isArray(handlers)) {
    throw new StepforgeError(
      'invalid_handlers',
      `the handlers module '${shown}' must default-export an object mapping Lambda names/ARNs to async functions`,
      {
        location: { file: shown, line: 1, column: 1 },
      },
    );
  }
  for (const [name, fn] of Object.entries(handlers)) {
    if (typeof fn !== 'function') {
      throw new StepforgeError('invalid_handlers', `handler '${name}' in '${shown}' is not a function`, {
        location: { file: shown, line: 1, column: 1 },
      });
    }
  }
  return handlers as LambdaHandlers;
}

/** API errors from creating/starting become named CLI errors pointing at the definition. */
function toStepforgeError(e: unknown, file: string, text: string): unknown {
  if (!isSfnApiError(e)) return e;
  const code =
    e.type === 'InvalidDefinition'
      ? 'invalid_definition'
      : e.type === 'InvalidName'
        ? 'invalid_name'
        : e.type === 'InvalidExecutionInput'
          ? 'invalid_input'
          : 'invalid_request';
  // Point at the offending state when the message names a JSON path like /States/Foo/Resource.
  const path = /at (\/States\/[^,' ]+)/.exec(e.message)?.[1];
  let location = { file, line: 1, column: 1 } as { file: string; line: number; column: number; length?: number };
  if (path) {
    const state = path.split('/')[2];
    // The state's key (`"Name":`), not a `"Next": "Name"` that mentions it earlier.
    const key = state !== undefined ? new RegExp(`${escapeRegExp(JSON.stringify(state))}\\s*:`).exec(text) : null;
    const at = key ? key.index : -1;
    if (at >= 0) {
      const pos = new SourceText(text, file).position(at);
      location = { file, ...pos, length: JSON.stringify(state).length };
    }
  }
  return new StepforgeError(code, e.message, { location, source: text });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
