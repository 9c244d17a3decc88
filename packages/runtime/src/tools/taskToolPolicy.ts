// A task's own tool policy (a Contenox chain's `execute_config.tools_policies`), applied on top of
// the project's: it narrows what the project allows (fewer commands, a smaller directory, a lower
// read cap, fewer hosts) and can never widen it. The compiler carries it in the step's config; the
// tool handler builds the narrowed tool for each call from the project's configuration, so the
// limits hold whichever process runs the call (an agent's turn, or an approval answered later).
import { CONTENOX_TOOLS, contenoxToolSetOf } from '@stepforge/contract';
import { isAbsolute, resolve } from 'node:path';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { RuntimeError } from '../errors/RuntimeError.js';
import { confinePath } from './confinePath.js';
import { fsListTool, fsReadTool, type FsPolicy } from './fsTools.js';
import { httpFetchTool } from './httpTools.js';
import { parseCommand, shellTool } from './shellTool.js';
import type { ToolDefinition } from './ToolDefinition.js';

type Keys = Readonly<Record<string, unknown>>;

/** The policy keys a step's config sets for one of our tools (by its Contenox tool set, or by its own name). */
export function taskPolicyFor(config: Readonly<Record<string, unknown>> | undefined, tool: string): Keys | undefined {
  const all = config?.tools_policies;
  if (all === null || typeof all !== 'object' || Array.isArray(all)) return undefined;
  const set = contenoxToolSetOf(tool);
  const merged: Record<string, unknown> = {};
  for (const [name, keys] of Object.entries(all as Record<string, unknown>)) {
    if (keys === null || typeof keys !== 'object') continue;
    const applies = name === tool || (set !== undefined && name === set && (CONTENOX_TOOLS[set] ?? []).includes(tool));
    if (applies) Object.assign(merged, keys);
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
}

function list(v: unknown): string[] | undefined {
  const s = text(v);
  return s === undefined
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
}

/** A positive byte count; undefined for absent, unparsable or non-positive (Contenox's "unlimited", which here leaves the project's cap). */
function positive(v: unknown): number | undefined {
  const s = text(v);
  if (s === undefined || !/^-?\d+$/.test(s)) return undefined;
  const n = Number(s);
  return n > 0 ? n : undefined;
}

function denied(tool: string, message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError('PolicyDenied', `${tool}: ${message} (this task's tools_policies)`, {
    details: { tool, source: 'tools_policies', ...details },
  });
}

/**
 * The task's `_allowed_dir` inside the project's fs root: relative to the root, or absolute. A
 * directory outside the root cannot narrow it, so it is refused (every call fails) rather than
 * ignored or followed.
 */
async function narrowedRoot(config: RuntimeConfig, tool: string, dir: unknown): Promise<string> {
  const root = config.tools.fsRoot;
  const d = text(dir);
  if (d === undefined) return root;
  const protectedPaths = [config.secrets.file];
  try {
    return await confinePath({ root, protectedPaths }, isAbsolute(d) ? d : resolve(root, d));
  } catch (e) {
    throw denied(tool, `_allowed_dir "${d}" is not a directory inside the project's allowed directory, so it cannot narrow it`, {
      allowedDir: d,
      reason: 'allowed_dir',
    });
  }
}

/**
 * The tool `name` as the project configures it, narrowed by the task's policy keys; undefined when
 * the step's config sets none for it (the caller uses the registry's tool).
 */
export async function narrowedTool(
  config: RuntimeConfig,
  stepConfig: Readonly<Record<string, unknown>> | undefined,
  name: string,
): Promise<ToolDefinition | undefined> {
  const keys = taskPolicyFor(stepConfig, name);
  if (keys === undefined) return undefined;
  const protectedPaths = [config.secrets.file];
  switch (name) {
    case 'shell': {
      const allow = list(keys._allowed_commands);
      const deny = list(keys._denied_commands) ?? [];
      const cwd = await narrowedRoot(config, name, keys._allowed_dir);
      const inner = shellTool({
        enabled: config.tools.shellEnabled && config.mode === 'embedded',
        // Narrowing only: a command the task allows but the project does not stays refused.
        allow: allow === undefined ? config.tools.shellAllow : config.tools.shellAllow.filter((c) => allow.includes(c)),
        deny: [...config.tools.shellDeny, ...deny],
        cwd,
        protectedPaths,
      });
      return {
        ...inner,
        async run(args, ctx) {
          // The task's own lists first, so the refusal says which policy refused.
          if (typeof args.command === 'string') {
            const program = parseCommand(args.command)[0]!.split('/').pop()!;
            if (deny.includes(program)) throw denied('shell', `command "${program}" is denied`, { program, reason: 'denied' });
            if (allow !== undefined && !allow.includes(program))
              throw denied('shell', `command "${program}" is not in the allowed list (${allow.join(', ')})`, {
                program,
                reason: 'not_allowed',
              });
          }
          return inner.run(args, ctx);
        },
      };
    }
    case 'fs-list':
    case 'fs-read': {
      const root = await narrowedRoot(config, name, keys._allowed_dir);
      const cap = positive(keys._max_read_bytes);
      const policy: FsPolicy = {
        root,
        protectedPaths,
        maxReadBytes: cap !== undefined ? Math.min(cap, config.tools.fsMaxReadBytes) : config.tools.fsMaxReadBytes,
      };
      const inner = name === 'fs-read' ? fsReadTool(policy) : fsListTool(policy);
      const deniedParts = list(keys._denied_path_substrings) ?? [];
      const maxOutput = positive(keys._max_output_bytes);
      return {
        ...inner,
        async run(args, ctx) {
          const path = String(args.path ?? '.').replaceAll('\\', '/');
          const hit = deniedParts.find((p) => path.includes(p));
          if (hit !== undefined) throw denied(name, `path "${path}" contains "${hit}", which is denied`, { path, reason: 'denied_path' });
          const out = await inner.run(args, ctx);
          const bytes = Buffer.byteLength(JSON.stringify(out));
          if (maxOutput !== undefined && bytes > maxOutput)
            throw denied(name, `the result is ${bytes} bytes, over the ${maxOutput}-byte output limit`, {
              bytes,
              limit: maxOutput,
              reason: 'output_limit',
            });
          return out;
        },
      };
    }
    case 'http_fetch': {
      const allowHosts = list(keys._allowed_hosts);
      const deniedHosts = list(keys._denied_hosts) ?? [];
      const schemes = list(keys._allowed_schemes)?.map((s) => s.toLowerCase());
      const matches = (host: string, patterns: readonly string[]) =>
        patterns.some((p) => {
          const q = p.toLowerCase().replace(/^\*\./, '');
          return host === q || host.endsWith(`.${q}`);
        });
      const cap = positive(keys._max_response_bytes);
      const timeout = positive(keys._request_timeout_seconds);
      return httpFetchTool({
        allowHosts: config.tools.httpAllowHosts,
        allowPrivateNetworks: config.tools.httpAllowPrivateNetworks ?? false,
        ...(cap !== undefined ? { maxBodyBytes: Math.min(cap, 256 * 1024) } : {}),
        ...(timeout !== undefined ? { timeoutMs: Math.min(timeout * 1000, 30_000) } : {}),
        // Every hop, redirects included, passes the task's lists as well as the project's.
        checkUrl(url) {
          const host = url.hostname.toLowerCase();
          if (schemes !== undefined && !schemes.includes(url.protocol.replace(/:$/, '')))
            throw denied(name, `scheme ${url.protocol.replace(/:$/, '')} is not allowed`, { url: url.host, reason: 'scheme' });
          if (matches(host, deniedHosts)) throw denied(name, `host ${host} is denied`, { host, reason: 'denied_host' });
          if (allowHosts !== undefined && !matches(host, allowHosts))
            throw denied(name, `host ${host} is not in the allowed hosts (${allowHosts.join(', ')})`, { host, reason: 'not_allowed' });
        },
      });
    }
    default:
      return undefined;
  }
}
