import { readFile } from 'node:fs/promises';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { awsClientConfig } from '../config/awsClientConfig.js';
import { jsonErrorOffset } from '../config/jsonErrorOffset.js';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { Redactor } from './Redactor.js';

/** The prefix of a secret reference inside step arguments: `$secret:<id>`. */
export const SECRET_PREFIX = '$secret:';

const SECRET_ID = /^[A-Za-z0-9_.\-/]+$/;

/** `STEPFORGE_SECRET_<ID>`: the id upper-cased with every non-alphanumeric character as `_`. */
export function secretEnvName(id: string): string {
  return `STEPFORGE_SECRET_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * Resolves `$secret:<id>` references: Secrets Manager or SSM Parameter Store on AWS; the
 * environment (`STEPFORGE_SECRET_<ID>`) then `.stepforge/secrets.json` when embedded. Every
 * resolved value is registered with the Redactor before it is returned.
 */
export class SecretResolver {
  readonly #config: RuntimeConfig;
  readonly #redactor: Redactor;
  readonly #env: Record<string, string | undefined>;
  readonly #cache = new Map<string, string>();
  #file?: Promise<Record<string, unknown>>;
  #sm?: SecretsManagerClient;
  #ssm?: SSMClient;

  constructor(config: RuntimeConfig, redactor: Redactor, env: Record<string, string | undefined> = process.env) {
    this.#config = config;
    this.#redactor = redactor;
    this.#env = env;
  }

  /** True when `value` is a `$secret:<id>` reference. */
  static isReference(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SECRET_PREFIX);
  }

  /** The value of secret `id`; throws `SecretNotFound` (never echoing any value). */
  async resolve(id: string): Promise<string> {
    if (!SECRET_ID.test(id)) throw new RuntimeError('SecretNotFound', `invalid secret id "${id}"`);
    const cached = this.#cache.get(id);
    if (cached !== undefined) return cached;
    const value = await this.#lookup(id);
    if (value === undefined) {
      throw new RuntimeError('SecretNotFound', `secret "${id}" is not defined (${this.#where(id)})`, { details: { secret: id } });
    }
    if (value.length < 4) {
      // A 1–3 character value would redact ordinary text all over the logs; refuse it instead.
      throw new RuntimeError('SecretNotFound', `secret "${id}" is shorter than 4 characters; refusing to use it`, { details: { secret: id } });
    }
    this.#redactor.add(value);
    this.#cache.set(id, value);
    return value;
  }

  /**
   * Registers with the Redactor every secret this process could be given, used or not: each
   * `STEPFORGE_SECRET_*` value of the environment and, embedded, each value of the secrets file
   * (read afresh, so a secret added since is known). A tool's output is redacted with them: a
   * secret copied into a project file and read by a tool is not stored as it is. Values under 4
   * characters are left out (the resolver refuses them too); on AWS the backends cannot be listed.
   */
  async registerKnown(): Promise<void> {
    for (const [name, value] of Object.entries(this.#env)) {
      if (name.startsWith('STEPFORGE_SECRET_') && typeof value === 'string' && value.length >= 4) this.#redactor.add(value);
    }
    const { backend, file } = this.#config.secrets;
    if (backend === 'secretsmanager' || backend === 'ssm') return;
    let values: Record<string, unknown>;
    try {
      values = parseSecretsFile(await readFile(file, 'utf8'), file);
    } catch {
      // No file, or one that does not parse: no value to know (a run that uses one says why).
      return;
    }
    for (const value of Object.values(values)) if (typeof value === 'string' && value.length >= 4) this.#redactor.add(value);
  }

  /** Replaces every `$secret:<id>` string (deeply) in `value` with the secret's value. */
  async resolveDeep<T>(value: T): Promise<T> {
    if (SecretResolver.isReference(value)) return (await this.resolve(value.slice(SECRET_PREFIX.length))) as T;
    if (Array.isArray(value)) return (await Promise.all(value.map((v) => this.resolveDeep(v)))) as T;
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.resolveDeep(v);
      return out as T;
    }
    return value;
  }

  #where(id: string): string {
    switch (this.#config.secrets.backend) {
      case 'secretsmanager': return `Secrets Manager secret "${id}"`;
      case 'ssm': return `SSM parameter "${this.#config.secrets.ssmPrefix}${id}"`;
      default: return `set ${secretEnvName(id)} or add "${id}" to ${this.#config.secrets.file}`;
    }
  }

  async #lookup(id: string): Promise<string | undefined> {
    const { backend } = this.#config.secrets;
    if (backend === 'secretsmanager') {
      // Each backend's client is loaded on first use: every process loads this module, few use either.
      const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
      this.#sm ??= new SecretsManagerClient(awsClientConfig(this.#config.region, this.#config.endpoints.secretsmanager));
      try {
        const r = await this.#sm.send(new GetSecretValueCommand({ SecretId: id }));
        return r.SecretString;
      } catch (e) {
        if ((e as { name?: string }).name === 'ResourceNotFoundException') return undefined;
        throw e;
      }
    }
    if (backend === 'ssm') {
      const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
      this.#ssm ??= new SSMClient(awsClientConfig(this.#config.region, this.#config.endpoints.ssm));
      try {
        const r = await this.#ssm.send(new GetParameterCommand({ Name: `${this.#config.secrets.ssmPrefix}${id}`, WithDecryption: true }));
        return r.Parameter?.Value;
      } catch (e) {
        if ((e as { name?: string }).name === 'ParameterNotFound') return undefined;
        throw e;
      }
    }
    const fromEnv = this.#env[secretEnvName(id)];
    if (fromEnv !== undefined) return fromEnv;
    const file = this.#config.secrets.file;
    this.#file ??= readFile(file, 'utf8').then(
      (t) => parseSecretsFile(t, file),
      (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return {};
        throw new RuntimeError('ConfigError', `cannot read ${file}: ${e.message}`);
      },
    );
    const v = (await this.#file)[id];
    return typeof v === 'string' ? v : undefined;
  }
}

/**
 * The secrets file: a JSON object of secret id → string. Text that is not JSON, or a document of
 * another shape, is a ConfigError naming the file (not a SyntaxError, and not "no secrets").
 */
export function parseSecretsFile(text: string, file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    // The parser's message, not the text: it may hold secrets.
    const pos = jsonErrorOffset(text);
    const line = text.slice(0, pos).split('\n').length;
    const column = pos - text.lastIndexOf('\n', pos - 1);
    throw new RuntimeError('ConfigError', `${file}:${line}:${column}: the secrets file is not valid JSON; it must be an object of secret id → string, e.g. {"slack_token": "xoxb-…"}`, { details: { file, line, column } });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new RuntimeError('ConfigError', `${file}: the secrets file must be a JSON object of secret id → string, e.g. {"slack_token": "xoxb-…"}`, { details: { file } });
  }
  for (const [id, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw new RuntimeError('ConfigError', `${file}: secret "${id}" must be a string, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`, { details: { file, secret: id } });
  }
  return parsed as Record<string, unknown>;
}
