import { readFile } from 'node:fs/promises';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import type { SecretStore } from './awsSecretStores.js';
import { jsonErrorOffset } from '@stepforge/contract';
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
  readonly #capture: <T extends object>(client: T) => T;
  /** Values by id with the time they are read again (the TTL applies to every backend). */
  readonly #cache = new Map<string, { value: string; until: number }>();
  #file?: { values: Promise<Record<string, unknown>>; until: number };
  #store?: Promise<SecretStore>;

  /** `capture` is given each AWS SDK client the resolver makes (the runtime traces them on Lambda). */
  constructor(
    config: RuntimeConfig,
    redactor: Redactor,
    env: Record<string, string | undefined> = process.env,
    capture: <T extends object>(client: T) => T = (c) => c,
  ) {
    this.#config = config;
    this.#redactor = redactor;
    this.#env = env;
    this.#capture = capture;
  }

  /** True when `value` is a `$secret:<id>` reference. */
  static isReference(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SECRET_PREFIX);
  }

  /** The value of secret `id`; throws `SecretNotFound` (never echoing any value). */
  async resolve(id: string): Promise<string> {
    if (!SECRET_ID.test(id)) throw new RuntimeError('SecretNotFound', `invalid secret id "${id}"`);
    const cached = this.#cache.get(id);
    if (cached !== undefined && Date.now() < cached.until) return cached.value;
    const value = await this.#lookup(id);
    if (value === undefined) {
      throw new RuntimeError('SecretNotFound', `secret "${id}" is not defined (${this.#where(id)})`, { details: { secret: id } });
    }
    if (value.length < 4) {
      // A 1–3 character value would redact ordinary text all over the logs; refuse it instead.
      throw new RuntimeError('SecretNotFound', `secret "${id}" is shorter than 4 characters; refusing to use it`, {
        details: { secret: id },
      });
    }
    this.#redactor.add(value);
    // Secrets Manager and SSM values are cached by Powertools Parameters with the same TTL.
    if (this.#config.secrets.backend === 'env') this.#cache.set(id, { value, until: Date.now() + this.#config.secrets.ttlSeconds * 1000 });
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
      case 'secretsmanager':
        return `Secrets Manager secret "${id}"`;
      case 'ssm':
        return `SSM parameter "${this.#config.secrets.ssmPrefix}${id}"`;
      default:
        return `set ${secretEnvName(id)} or add "${id}" to ${this.#config.secrets.file}`;
    }
  }

  async #lookup(id: string): Promise<string | undefined> {
    const { backend } = this.#config.secrets;
    // The stores (and their SDK clients) are loaded on first use: every process loads this module, few
    // use either. A Lambda bundle is built with STEPFORGE_BUNDLED_SECRETS_BACKEND defined as the one
    // backend its stack deploys (handlerBundling.ts), which makes the other store's import dead code
    // that esbuild leaves out; a bundle asked for the other backend says so rather than reading nothing.
    if (backend === 'ssm' && process.env.STEPFORGE_BUNDLED_SECRETS_BACKEND !== 'secretsmanager') {
      this.#store ??= import('./awsSsmSecretStore.js').then((m) => m.awsSsmSecretStore(this.#config, this.#capture));
      return (await this.#store)(id);
    }
    if (backend === 'secretsmanager' && process.env.STEPFORGE_BUNDLED_SECRETS_BACKEND !== 'ssm') {
      this.#store ??= import('./awsSecretStores.js').then((m) => m.awsSecretStore(this.#config, this.#capture));
      return (await this.#store)(id);
    }
    if (backend === 'secretsmanager' || backend === 'ssm') {
      throw new RuntimeError(
        'ConfigError',
        `STEPFORGE_SECRETS_BACKEND is '${backend}', but this Lambda bundle was built with the ${String(process.env.STEPFORGE_BUNDLED_SECRETS_BACKEND)} store only: deploy with the backend the stack sets, or rebuild the bundle for '${backend}'`,
      );
    }
    const fromEnv = this.#env[secretEnvName(id)];
    if (fromEnv !== undefined) return fromEnv;
    const file = this.#config.secrets.file;
    // Read again once the TTL has passed, so a secret changed in the file is seen by a long-lived `serve`.
    if (!this.#file || Date.now() >= this.#file.until) {
      this.#file = {
        until: Date.now() + this.#config.secrets.ttlSeconds * 1000,
        values: readFile(file, 'utf8').then(
          (t) => parseSecretsFile(t, file),
          (e: NodeJS.ErrnoException) => {
            if (e.code === 'ENOENT') return {};
            throw new RuntimeError('ConfigError', `cannot read ${file}: ${e.message}`);
          },
        ),
      };
    }
    const v = (await this.#file.values)[id];
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
    throw new RuntimeError(
      'ConfigError',
      `${file}:${line}:${column}: the secrets file is not valid JSON; it must be an object of secret id → string, e.g. {"slack_token": "xoxb-…"}`,
      { details: { file, line, column } },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new RuntimeError(
      'ConfigError',
      `${file}: the secrets file must be a JSON object of secret id → string, e.g. {"slack_token": "xoxb-…"}`,
      { details: { file } },
    );
  }
  for (const [id, v] of Object.entries(parsed)) {
    if (typeof v !== 'string')
      throw new RuntimeError(
        'ConfigError',
        `${file}: secret "${id}" must be a string, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`,
        { details: { file, secret: id } },
      );
  }
  return parsed as Record<string, unknown>;
}
