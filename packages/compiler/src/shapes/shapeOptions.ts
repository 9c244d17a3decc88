import { z } from 'zod';
import { StepforgeError } from '@stepforge/contract';
import type { ModelTask } from '../chain/ChainTask.js';
import { NAME_PATTERN } from '../chain/ChainTask.js';

const name = z.string().regex(NAME_PATTERN, { message: 'a name matching [A-Za-z_][A-Za-z0-9_-]*' });

/** Options every shape accepts. */
export const CommonShapeOptions = {
  /** Tools granted to the agentic steps (default `web-search`); an empty list grants none. */
  tools: z.array(name).optional(),
  /** Model id for every model step (`<provider>:<model-id>`); default: the project's configured provider. */
  model: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+:\S+$/, { message: 'a model id "<provider>:<model-id>"' })
    .optional(),
  /** The document's `name:` (names the state machine). */
  name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,80}$/, { message: "1-80 letters, digits, '-' or '_'" })
    .optional(),
};

/**
 * How many step outputs one pure step may read: a pure step runs in the state machine, so each output
 * it reads is kept inline (up to 32 KiB) and all of them pass through one state; past three, the
 * worst case exceeds Step Functions' 256 KiB payload and the compiler refuses it (payload_budget).
 */
export const MAX_PURE_READS = 3;

/** Refuses a count a pure step that reads every part could not carry, saying why and what to use instead. */
export function checkPureReads(shape: string, option: string, n: number, step: string, instead: string): void {
  if (n <= MAX_PURE_READS) return;
  throw new StepforgeError(
    'invalid_shape_option',
    `${shape}: option '${option}': at most ${MAX_PURE_READS}, got ${n}: the pure '${step}' step reads every output in the state machine (each kept inline, up to 32 KiB) and more than ${MAX_PURE_READS} may exceed Step Functions' 256 KiB payload, so the document would not compile; ${instead}`,
    { details: { shape, option, max: MAX_PURE_READS } },
  );
}

/** A count option: an integer from 1 to `max`. */
export const count = (max: number) => z.number().int().min(1).max(max);

/**
 * Parses shape options strictly (middy style: a misspelt option fails at once) and turns zod's
 * complaint into a StepforgeError `invalid_shape_option` naming the option.
 */
export function parseShapeOptions<T extends z.ZodType>(shape: string, schema: T, options: unknown): z.output<T> {
  const r = schema.safeParse(options ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const option = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.');
  throw new StepforgeError('invalid_shape_option', `${shape}: option '${option}': ${issue.message}`, { details: { shape, option } });
}

/** `handle@t1@t2` for the granted tools. */
export function tagged(handle: string, tools: readonly string[]): string {
  return handle + tools.map((t) => '@' + t).join('');
}

/** A model task, with `model:` only when one was chosen. */
export function modelTask(prompt: string, model: string | undefined, extra: Partial<ModelTask> = {}): ModelTask {
  return { kind: 'model', ...(model !== undefined ? { model } : {}), prompt, ...extra };
}

/** `[a & b & c]` (no brackets for one item). */
export function parallel(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `[${items.join(' & ')}]`;
}

/** `handle_1 … handle_n`. */
export function numbered(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}_${i + 1}`);
}

/** The standard input every shape declares: the task to work on. */
export const TASK_INPUT = { task: { type: 'string', description: 'What the workflow should work on.' } } as const;

/** Default tool grant for agentic steps. */
export const DEFAULT_TOOLS = ['web-search'] as const;
