import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { StepforgeError } from '@stepforge/compiler';
import type { FunctionsRuntime } from '@stepforge/embedded';

/**
 * Before a run of a workflow that names secrets (`$secret:ID` anywhere in its text): the embedded
 * stack's secrets file (`STEPFORGE_SECRETS_FILE`, else `.stepforge/secrets.json` in the project),
 * when there is one, must be readable as secret id → string. Otherwise the run would start and fail
 * only at the first step that reads a secret, after other steps ran. `invalid_secrets_file` names the
 * file, the place and how to fix it. No file is fine: the secrets may come from the environment.
 */
export function checkSecretsFile(
  fr: Pick<FunctionsRuntime, 'parseSecretsFile'>,
  documentText: string,
  projectDir: string,
  env: Readonly<Record<string, string | undefined>>,
): void {
  // The text, not the compiled workflow: a `$secret:` reference is a string wherever the format puts it.
  if (!documentText.includes('$secret:')) return;
  if ((env.STEPFORGE_SECRETS_BACKEND ?? 'env') !== 'env') return;
  const configured = env.STEPFORGE_SECRETS_FILE;
  const file =
    configured !== undefined
      ? isAbsolute(configured)
        ? configured
        : resolve(projectDir, configured)
      : join(projectDir, '.stepforge', 'secrets.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new StepforgeError(
      'invalid_secrets_file',
      `the secrets file ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {
        location: { file, line: 1, column: 1 },
        hint: 'make it readable, or remove it and give the secrets as STEPFORGE_SECRET_<ID> environment variables; nothing ran',
      },
    );
  }
  try {
    fr.parseSecretsFile(text, file);
  } catch (e) {
    const details = (e as { details?: { line?: number; column?: number } }).details ?? {};
    // The parser's message never holds the file's text (it may hold secrets); no excerpt is shown either.
    const message = (e as Error).message.replace(`${file}:${details.line}:${details.column}: `, '').replace(`${file}: `, '');
    throw new StepforgeError(
      'invalid_secrets_file',
      `${message} (the secrets file ${file}, which this workflow's $secret: references read)`,
      {
        location: { file, line: details.line ?? 1, column: details.column ?? 1 },
        hint: 'write it as a JSON object of secret id → string, e.g. {"slack_token": "xoxb-…"}, or remove it and give the secrets as STEPFORGE_SECRET_<ID> environment variables; nothing ran',
      },
    );
  }
}
