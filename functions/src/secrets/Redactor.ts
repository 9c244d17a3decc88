/** The text that replaces a secret value wherever it would otherwise appear. */
export const REDACTED = '***';

/**
 * Remembers every secret value resolved in this process and scrubs them out of strings and
 * JSON-like values. Every record write, step output and log line goes through `redact`, so a
 * secret never reaches DynamoDB, the state payload, execution history or logs.
 */
export class Redactor {
  readonly #values = new Set<string>();

  /** Registers a secret value (values shorter than 4 characters are too ambiguous to scrub and are refused by the resolver). */
  add(value: string): void {
    if (value.length > 0) this.#values.add(value);
  }

  get size(): number {
    return this.#values.size;
  }

  /** Replaces every known secret value inside `text`. */
  redactText(text: string): string {
    if (this.#values.size === 0) return text;
    let out = text;
    // Longest first, so a secret containing another is replaced whole.
    for (const v of [...this.#values].sort((a, b) => b.length - a.length)) {
      if (out.includes(v)) out = out.split(v).join(REDACTED);
    }
    return out;
  }

  /** Deep copy of `value` with every known secret value replaced (object keys included). */
  redact<T>(value: T): T {
    if (this.#values.size === 0) return value;
    return this.#walk(value, 0) as T;
  }

  /** True when `value` (deeply) contains a known secret. */
  contains(value: unknown): boolean {
    if (this.#values.size === 0) return false;
    const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
    for (const v of this.#values) if (text.includes(v)) return true;
    return false;
  }

  #walk(value: unknown, depth: number): unknown {
    if (depth > 64) return value;
    if (typeof value === 'string') return this.redactText(value);
    if (Array.isArray(value)) return value.map((v) => this.#walk(v, depth + 1));
    if (value instanceof Error) {
      const copy = new Error(this.redactText(value.message));
      copy.name = value.name;
      if (value.stack) copy.stack = this.redactText(value.stack);
      return copy;
    }
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.redactText(k)] = this.#walk(v, depth + 1);
      return out;
    }
    return value;
  }
}
