import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepforgeError } from '@stepforge/compiler';
import { MCP_SERVER_SHAPE, mcpServerProblem } from '@stepforge/contract';
import { z } from 'zod';

/** The project's settings file, at the project root. */
export const PROJECT_SETTINGS_FILE = 'stepforge.config.json';

/** What a project may configure for the runtime of its embedded stack (`stepforge.config.json`). */
const ProjectSettingsSpec = z.strictObject({
  /**
   * MCP servers by name, as STEPFORGE_MCP_SERVERS holds them: `{url, headers?}` or
   * `{command, args?, env?, cwd?}`. The only place a stdio server's command may come from.
   */
  mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** Outbound HTTP of `http_fetch` and the connectors. */
  http: z
    .strictObject({
      /** Hosts that may be reached: `api.example.com`, `127.0.0.1:8080`, `*.example.org`. */
      allowHosts: z.array(z.string().min(1)).optional(),
      /** Let names resolve to private networks (10/8, 172.16/12, 192.168/16, fc00::/7, loopback). */
      allowPrivateNetworks: z.boolean().optional(),
    })
    .optional(),
});

/** The project's settings (`stepforge.config.json`); every field optional. */
export type ProjectSettings = z.infer<typeof ProjectSettingsSpec>;

/**
 * Reads `stepforge.config.json` from the project root. No file is no settings; a file that is
 * there but cannot be read, is not JSON or has an unknown or mistyped field stops the command
 * (`invalid_config`, with the place in the file): settings that decide what a workflow may reach
 * are never guessed at.
 */
export function readProjectSettings(projectDir: string): ProjectSettings {
  const file = join(projectDir, PROJECT_SETTINGS_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new StepforgeError('invalid_config', `${file} cannot be read: ${(e as Error).message}`, {
      hint: `make it readable, or remove it to run with no project settings`,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    const at = /position (\d+)/.exec(message);
    const offset = at ? Number(at[1]) : undefined;
    throw new StepforgeError('invalid_config', `${PROJECT_SETTINGS_FILE} is not valid JSON: ${message}`, {
      ...(offset !== undefined ? { location: { file, ...lineColumn(text, offset) }, source: text } : {}),
      hint: 'fix the JSON (an object such as {"http": {"allowHosts": ["api.example.com"]}})',
    });
  }
  const r = ProjectSettingsSpec.safeParse(parsed);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const where = issue.path.join('.') || '(the file)';
    throw new StepforgeError('invalid_config', `${file}: ${where}: ${issue.message}`, {
      hint: 'the file may hold "mcpServers" (name → {url} or {command, args}) and "http" ({"allowHosts": [...], "allowPrivateNetworks": false}); see docs/runtime.md',
    });
  }
  for (const [name, server] of Object.entries(r.data.mcpServers ?? {})) checkMcpServer(name, server, file, text);
  return r.data;
}

/** One `mcpServers` entry, checked when the file is read (mcpServerProblem), located at its field. */
function checkMcpServer(name: string, server: Record<string, unknown>, file: string, text: string): void {
  const problem = mcpServerProblem(server);
  if (problem === undefined) return;
  const key = problem.field;
  throw new StepforgeError('invalid_config', `${file}: mcpServers.${name}${key !== undefined ? `.${key}` : ''}: ${problem.message}`, {
    location: { file, ...lineColumn(text, fieldOffset(text, name, key)) },
    source: text,
    hint: `${MCP_SERVER_SHAPE}; fix it in ${PROJECT_SETTINGS_FILE} (nothing ran)`,
  });
}

/** Where a server's field is written (its key), else the server's name, else the file's start. */
function fieldOffset(text: string, name: string, key: string | undefined): number {
  const at = text.indexOf(JSON.stringify(name), Math.max(0, text.indexOf('"mcpServers"')));
  if (at < 0) return 0;
  if (key === undefined) return at;
  const k = text.indexOf(JSON.stringify(key), at);
  return k < 0 ? at : k;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}
