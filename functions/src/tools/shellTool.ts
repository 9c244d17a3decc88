import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** Policy of the shell tool. */
export interface ShellPolicy {
  readonly enabled: boolean;
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly cwd: string;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
}

// Anything a shell would interpret: substitution, chaining, pipes, redirection, globbing of env.
const FORBIDDEN: readonly [RegExp, string][] = [
  [/`/, 'command substitution (backticks)'],
  [/\$\(/, 'command substitution ($( ))'],
  [/\$\{|\$[A-Za-z_]/, 'variable expansion'],
  [/;/, 'command chaining (;)'],
  [/&&|\|\|/, 'command chaining (&& / ||)'],
  [/\|/, 'pipes'],
  [/&/, 'background execution (&)'],
  [/[<>]/, 'redirection'],
  [/[\r\n]/, 'multiple lines'],
];

/** Splits a command line into argv (whitespace, with single/double quotes), rejecting shell syntax first. */
export function parseCommand(command: string): string[] {
  for (const [re, what] of FORBIDDEN) {
    if (re.test(command)) throw new RuntimeError('PolicyDenied', `shell refuses ${what}`, { details: { reason: what } });
  }
  const argv: string[] = [];
  let cur = '';
  let quote: '"' | "'" | undefined;
  let has = false;
  for (const ch of command) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) argv.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (quote) throw new RuntimeError('InvalidInput', 'unterminated quote in command');
  if (has || cur) argv.push(cur);
  if (argv.length === 0) throw new RuntimeError('InvalidInput', 'empty command');
  return argv;
}

/** `shell`: runs one allow-listed program without a shell (embedded only; off on AWS). */
export function shellTool(policy: ShellPolicy): ToolDefinition {
  return {
    name: 'shell',
    description: `Run one command (no pipes, chaining or substitution). Allowed programs: ${policy.allow.join(', ')}.`,
    inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
    sideEffect: true,
    async run(args, ctx) {
      if (!policy.enabled) throw new RuntimeError('PolicyDenied', 'the shell tool is disabled here (it is never available on AWS)');
      if (typeof args.command !== 'string') throw new RuntimeError('InvalidInput', 'command must be a string');
      const argv = parseCommand(args.command);
      const program = argv[0] as string;
      const name = basename(program);
      if (program.includes('/')) throw new RuntimeError('PolicyDenied', `shell refuses program paths ("${program}"); name an allowed program`, { details: { program } });
      if (policy.deny.includes(name)) throw new RuntimeError('PolicyDenied', `command "${name}" is denied`, { details: { program: name, reason: 'denied' } });
      if (!policy.allow.includes(name)) throw new RuntimeError('PolicyDenied', `command "${name}" is not in the allowed list`, { details: { program: name, reason: 'not_allowed' } });
      await ctx.guard.dispatch(`shell: ${name}`);
      return await new Promise((resolveP, reject) => {
        execFile(name, argv.slice(1), {
          cwd: policy.cwd, timeout: policy.timeoutMs ?? 30_000, maxBuffer: policy.maxOutputBytes ?? 1024 * 1024, shell: false,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        }, (err, stdout, stderr) => {
          if (err && typeof (err as { code?: unknown }).code !== 'number') {
            reject(new RuntimeError('ToolError', `shell: ${err.message}`));
            return;
          }
          resolveP({ exitCode: err ? (err as { code: number }).code : 0, stdout, stderr });
        });
      });
    },
  };
}
