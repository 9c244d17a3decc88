// What the Lambda bundles put where the AWS SDK's endpoint cache (DynamoDB's endpoint discovery)
// imports `mnemonist/lru-cache` (aliased in infra/lib/bundling/handlerBundling.ts): that module and
// the iterator helpers it brings are ~7 KiB of every handler that reaches DynamoDB, for a cache the
// endpoint cache calls five methods of. This is the same least-recently-used cache over a Map,
// checked against mnemonist's in packages/runtime/test/lruCache.test.ts.
import { RuntimeError } from '../errors/RuntimeError.js';

/** A cache of at most `capacity` entries that drops the least recently set or read one when full. */
export default class LRUCache<K, V> {
  readonly capacity: number;
  /** Entries from the least to the most recently used (a Map keeps insertion order). */
  readonly #items = new Map<K, V>();

  constructor(capacity: number) {
    if (typeof capacity !== 'number' || capacity <= 0)
      throw new RuntimeError('InvalidInput', 'mnemonist/lru-cache: capacity should be positive number.');
    this.capacity = capacity;
  }

  get size(): number {
    return this.#items.size;
  }

  /** Sets a value, which becomes the most recently used; the least recently used goes when the cache is full. */
  set(key: K, value: V): void {
    if (this.#items.has(key)) this.#items.delete(key);
    else if (this.#items.size >= this.capacity) this.#items.delete(this.#items.keys().next().value as K);
    this.#items.set(key, value);
  }

  /** A value, which becomes the most recently used. */
  get(key: K): V | undefined {
    if (!this.#items.has(key)) return undefined;
    const value = this.#items.get(key) as V;
    this.#items.delete(key);
    this.#items.set(key, value);
    return value;
  }

  /** A value, leaving the order of use as it is. */
  peek(key: K): V | undefined {
    return this.#items.get(key);
  }

  has(key: K): boolean {
    return this.#items.has(key);
  }

  clear(): void {
    this.#items.clear();
  }
}
