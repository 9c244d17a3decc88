import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { StepforgeError } from '@stepforge/compiler';

/**
 * Parses `--input`: inline JSON, or `@file` holding JSON. A syntax error is StepforgeError
 * `invalid_input_json` located in the text (line:column), so the user sees where it broke.
 */
export function readInput(raw: string | undefined, cwd: string): unknown {
  if (raw === undefined) return {};
  let text = raw;
  let file = '--input';
  if (raw.startsWith('@')) {
    file = raw.slice(1);
    try {
      text = readFileSync(isAbsolute(file) ? file : join(cwd, file), 'utf8');
    } catch (e) {
      throw new StepforgeError('file_not_found', `cannot read input file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
        location: { file, line: 1, column: 1 },
      });
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const message = (e as Error).message;
    const pos = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
    const before = text.slice(0, pos);
    const line = before.split('\n').length;
    const column = pos - before.lastIndexOf('\n');
    throw new StepforgeError('invalid_input_json', `the input is not valid JSON: ${message}`, {
      location: { file, line, column },
      source: text,
      hint: `pass a JSON object, e.g. --input '{"topic":"tide pools"}', or --input @input.json`,
    });
  }
}
