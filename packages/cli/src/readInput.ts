import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { MAX_INPUT_DEPTH, StepforgeError, inputDepthError, jsonErrorOffset } from '@stepforge/contract';
import { UsageError } from './CliIo.js';
import { errnoReason } from '@stepforge/embedded/project';

/** `--input -` and `--input @-`: the input is standard input (`@-` as a file name, the way `@FILE` reads FILE). */
export function isStdinInput(raw: string): boolean {
  return raw === '-' || raw === '@-';
}

/** Standard input's text, for `-` / `@-`; an unreadable one is `io`, with what to do instead. */
export function readStdinText(stdin: (() => string) | undefined, flag = '--input'): string {
  try {
    if (!stdin) throw new Error('this command was given no standard input');
    return stdin().replace(/^\uFEFF/, '');
  } catch (e) {
    throw new StepforgeError('io', `cannot read ${flag} from standard input: ${errnoReason(e)}`, {
      hint: `pipe the JSON in (echo '{"topic":"tides"}' | stepforge run FILE ${flag} -), or pass it inline or as ${flag} @FILE`,
    });
  }
}

/**
 * Parses `--input`: inline JSON, `@file` holding JSON, or `-` / `@-` for standard input; text
 * that is not JSON at all is the input as text (`{ input: text }`). A syntax error in text that
 * starts like JSON is StepforgeError `invalid_input_json` located in the text (line:column), so the
 * user sees where it broke.
 */
export function readInput(raw: string | undefined, cwd: string, stdin?: () => string, stdinPiped = false): unknown {
  if (raw === undefined) {
    // No --input and a pipe on standard input (`git diff | stepforge run review.json`): that is the input.
    if (!stdinPiped || !stdin) return {};
    const piped = readStdinText(stdin);
    if (piped.trim() === '') return {};
    return readInput('-', cwd, () => piped);
  }
  let text = raw;
  let file = '--input';
  if (isStdinInput(raw)) {
    text = readStdinText(stdin);
    file = '<stdin>';
  } else if (raw.startsWith('@')) {
    file = raw.slice(1);
    if (file === '') throw new UsageError('--input @ needs a file name after the @, e.g. --input @input.json');
    try {
      // An editor's byte order mark is not JSON, and not the user's input either.
      text = readFileSync(isAbsolute(file) ? file : join(cwd, file), 'utf8').replace(/^\uFEFF/, '');
    } catch (e) {
      throw new StepforgeError(
        (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file_not_found' : 'io',
        `cannot read input file ${file}: ${errnoReason(e)}`,
        {
          hint: '--input @FILE reads the run input from FILE (a JSON object), relative to the current directory',
        },
      );
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    // Text that does not even start like JSON is text (a diff, a question), inline, in a file or
    // on standard input alike: a Contenox chain's input is text, which a workflow reads as `input`.
    // Text that starts like JSON and breaks is a mistake, shown where it broke.
    if (!/^\s*[[{"]/.test(text)) return { input: text };
    const message = (e as Error).message;
    const pos = Number(/position (\d+)/.exec(message)?.[1] ?? jsonErrorOffset(text));
    const before = text.slice(0, pos);
    const line = before.split('\n').length;
    const column = pos - before.lastIndexOf('\n');
    throw new StepforgeError('invalid_input_json', `the input is not valid JSON: ${message}`, {
      location: { file, line, column },
      source: text,
      hint: `pass a JSON object, e.g. --input '{"topic":"tide pools"}', --input @input.json, or --input - to read it from standard input`,
    });
  }
  const tooDeep = inputDepthError(value);
  if (tooDeep !== undefined) {
    throw new StepforgeError('input_too_deep', tooDeep, {
      hint: `flatten the input, or pass the nested data by reference (a file path or URL); nothing ran`,
      details: { limit: MAX_INPUT_DEPTH },
    });
  }
  return value;
}
