import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';
import { confinePath, STATE_DIR_NAME, type PathJail } from './confinePath.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** Policy of the shell tool. */
export interface ShellPolicy {
  readonly enabled: boolean;
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  /** The fs root: the command runs there, and every path it is given must stay inside it. */
  readonly cwd: string;
  /** Paths no command may name wherever they are (the secret store); see PathJail. */
  readonly protectedPaths?: readonly string[];
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

/**
 * Splits a command line into argv as a POSIX shell would (whitespace; single quotes literal; double
 * quotes where `\` escapes `"` and `\`; a backslash outside quotes takes the next character),
 * rejecting shell syntax first. Policy rules are matched against this argv, so what is matched is
 * what runs.
 */
export function parseCommand(command: string): string[] {
  for (const [re, what] of FORBIDDEN) {
    if (re.test(command)) throw new RuntimeError('PolicyDenied', `shell refuses ${what}`, { details: { reason: what } });
  }
  const argv: string[] = [];
  let cur = '';
  let quote: '"' | "'" | undefined;
  let has = false;
  const chars = [...command];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (quote === "'") {
      if (ch === quote) quote = undefined;
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && (chars[i + 1] === '"' || chars[i + 1] === '\\')) cur += chars[++i];
      else cur += ch;
    } else if (ch === '\\') {
      if (i + 1 >= chars.length) throw new RuntimeError('InvalidInput', 'command ends with a lone backslash');
      cur += chars[++i];
      has = true;
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

/**
 * Programs that walk directory trees by themselves, which no argument check can confine (they
 * would descend into symlinks out of the root or into the state folder).
 */
const TRAVERSERS = new Set(['find', 'tree', 'du', 'tar', 'zip', 'rsync', 'rgrep', 'cp', 'scp']);

/**
 * Programs that run other programs, or commands and file names they read at run time (xargs -a
 * FILE, nice…): whatever they open is not among the arguments checked here. `env` runs its
 * arguments as a command; alone, it only prints the (scrubbed) environment.
 */
const RUNNERS = new Set([
  'xargs',
  'nice',
  'nohup',
  'timeout',
  'stdbuf',
  'time',
  'watch',
  'sudo',
  'doas',
  'su',
  'chroot',
  'parallel',
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'fish',
  'awk',
  'gawk',
  'mawk',
  'sed',
  'perl',
  'python',
  'python3',
  'node',
  'ruby',
  'php',
  'lua',
  'make',
]);

/**
 * Long options that read the names of the files to open from a file (or from standard input):
 * GNU wc, sort and du's --files0-from, tar's and rsync's --files-from, xargs' --arg-file. The
 * names in that file are never seen here, so they cannot be confined.
 */
const FILE_LIST_OPTIONS = ['files0-from', 'files-from', 'arg-file', 'from-file'];
/** Short options that do the same, per program (tar -T, xargs -a, cpio -E). */
const FILE_LIST_SHORT: Readonly<Record<string, string>> = { tar: 'T', xargs: 'a', cpio: 'E' };
/** Programs known to have no option that reads file names from a file (their long options may abbreviate to one of FILE_LIST_OPTIONS' prefixes harmlessly: grep --file reads patterns, a file confined as any other). */
const NO_FILE_LISTS = new Set(['ls', 'cat', 'echo', 'grep', 'egrep', 'fgrep', 'head', 'tail', 'pwd', 'date']);

/** Short options that recurse, per program; a program not listed here recurses with -r or -R. */
const RECURSIVE_SHORT: Readonly<Record<string, string>> = { ls: 'R', cat: '', echo: '', head: '', tail: '', wc: '', pwd: '', date: '' };

function fileListRefusal(arg: string): RuntimeError {
  return refusal(
    `shell refuses "${arg}": it reads the names of the files to open from a file, which cannot be confined; name the files as arguments`,
    'file_list',
    arg,
  );
}

function refusal(message: string, reason: string, arg?: string): RuntimeError {
  return new RuntimeError('PolicyDenied', message, { details: { reason, ...(arg !== undefined ? { arg } : {}) } });
}

/**
 * Refuses an option that makes `program` walk a tree, or that carries a path glued to it. Returns
 * what in it may name a file: the value of `--opt=VALUE`, or every tail of a short cluster (`-fFILE`
 * reads FILE whichever letter takes a value), each of which the caller checks as a path.
 */
function checkOption(program: string, arg: string): string[] {
  if (/recurs/i.test(arg) || (program.endsWith('grep') && /^--(directories|devices)\b/.test(arg))) {
    throw refusal(`shell refuses recursive traversal ("${arg}"): name the files to read`, 'recursive', arg);
  }
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    const name = (eq > 0 ? arg.slice(2, eq) : arg.slice(2)).toLowerCase();
    // GNU getopt takes any unambiguous prefix of a long option (`wc --files0=names`).
    if (!NO_FILE_LISTS.has(program) && name.length > 0 && FILE_LIST_OPTIONS.some((o) => o.startsWith(name))) throw fileListRefusal(arg);
    return eq > 0 && eq < arg.length - 1 ? [arg.slice(eq + 1)] : [];
  }
  const cluster = arg.slice(1);
  if ([...cluster].some((c) => (FILE_LIST_SHORT[program] ?? '').includes(c))) throw fileListRefusal(arg);
  if (/[\\/]|\.\./.test(cluster)) {
    throw refusal(`shell refuses a path glued to an option ("${arg}"): give the path as its own argument`, 'option_path', arg);
  }
  const recursive = RECURSIVE_SHORT[program] ?? 'rR';
  // grep -d ACTION / -D ACTION choose what to do with directories and devices (recurse among them).
  const extra = program.endsWith('grep') ? 'dD' : '';
  const hit = [...cluster].find((c) => recursive.includes(c) || extra.includes(c));
  if (hit) throw refusal(`shell refuses recursive traversal ("${arg}"): name the files to read`, 'recursive', arg);
  return [...cluster].slice(1).map((_, i) => cluster.slice(i + 1));
}

/**
 * Checks every argument of a command against the fs root: each operand, and each `--opt=VALUE`
 * value, is taken for a path (an argument that is not one, a grep pattern, resolves inside the root
 * and does no harm) and must pass confinePath; options may not recurse or carry paths.
 */
export async function confineArguments(jail: PathJail, program: string, args: readonly string[]): Promise<void> {
  if (TRAVERSERS.has(program))
    throw refusal(`shell refuses "${program}": it walks directory trees, which cannot be confined to the allowed directory`, 'recursive');
  if (RUNNERS.has(program) || (program === 'env' && args.length > 0))
    throw refusal(
      `shell refuses "${program}": it runs programs or opens files its arguments do not name, which cannot be confined to the allowed directory`,
      'runs_programs',
    );
  let operands = false;
  for (const arg of args) {
    if (arg.toLowerCase().includes(STATE_DIR_NAME)) {
      throw refusal(`shell refuses "${arg}": the project's ${STATE_DIR_NAME} folder is not for tools`, 'protected', arg);
    }
    if (!operands && arg === '--') {
      operands = true;
      continue;
    }
    const paths = !operands && arg.startsWith('-') && arg !== '-' ? checkOption(program, arg) : [arg];
    for (const path of paths) if (path !== '-') await confinePath(jail, path, { allowMissing: true });
  }
}

/** The whole environment a command gets: nothing of this process's (no secrets, no credentials, no keys). */
function scrubbedEnv(root: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, PWD: root, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
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
      if (program.includes('/'))
        throw new RuntimeError('PolicyDenied', `shell refuses program paths ("${program}"); name an allowed program`, {
          details: { program },
        });
      if (policy.deny.includes(name))
        throw new RuntimeError('PolicyDenied', `command "${name}" is denied`, { details: { program: name, reason: 'denied' } });
      if (!policy.allow.includes(name))
        throw new RuntimeError('PolicyDenied', `command "${name}" is not in the allowed list`, {
          details: { program: name, reason: 'not_allowed' },
        });
      const jail: PathJail = { root: policy.cwd, protectedPaths: policy.protectedPaths ?? [] };
      await confineArguments(jail, name, argv.slice(1));
      const root = await realpath(policy.cwd);
      await ctx.guard.dispatch(`shell: ${name}`);
      return await new Promise((resolveP, reject) => {
        const child = execFile(
          name,
          argv.slice(1),
          {
            cwd: root,
            timeout: policy.timeoutMs ?? 30_000,
            maxBuffer: policy.maxOutputBytes ?? 1024 * 1024,
            shell: false,
            env: scrubbedEnv(root),
          },
          (err, stdout, stderr) => {
            if (err && typeof (err as { code?: unknown }).code !== 'number') {
              reject(new RuntimeError('ToolError', `shell: ${err.message}`));
              return;
            }
            resolveP({ exitCode: err ? (err as { code: number }).code : 0, stdout, stderr });
          },
        );
        // No input: a program that would read stdin (grep without a file) ends at once instead of at the timeout.
        child.stdin?.end();
      });
    },
  };
}
