// The bundles' LRU cache (in mnemonist's place under DynamoDB's endpoint cache) agrees with mnemonist's.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import LRUCache from '../src/bundled/lruCache.js';

interface Cache {
  set(k: string, v: number): void;
  get(k: string): number | undefined;
  peek(k: string): number | undefined;
  has(k: string): boolean;
  clear(): void;
  readonly size: number;
}
const Mnemonist = createRequire(import.meta.url)('mnemonist/lru-cache') as new (capacity: number) => Cache;

/** A fixed pseudo-random sequence of operations (the same for both caches). */
function* operations(n: number): Generator<[string, string, number]> {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const kinds = ['set', 'set', 'get', 'peek', 'has', 'clear'];
  for (let i = 0; i < n; i++) yield [kinds[next() % (i % 97 === 96 ? 6 : 5)]!, `k${next() % 9}`, i];
}

describe('bundled LRU cache', () => {
  it.each([1, 2, 5])('answers as mnemonist does over a long run of operations (capacity %i)', (capacity) => {
    const ours = new LRUCache<string, number>(capacity);
    const theirs = new Mnemonist(capacity);
    for (const [op, key, value] of operations(2000)) {
      const a = op === 'set' ? ours.set(key, value) : op === 'clear' ? ours.clear() : ours[op as 'get' | 'peek' | 'has'](key);
      const b = op === 'set' ? theirs.set(key, value) : op === 'clear' ? theirs.clear() : theirs[op as 'get' | 'peek' | 'has'](key);
      expect([op, key, a, ours.size]).toEqual([op, key, b, theirs.size]);
    }
  });

  it('drops the least recently used entry, where a get uses it and a peek does not', () => {
    const c = new LRUCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    c.get('a');
    c.set('c', 3);
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([true, false, true]);
    c.peek('a');
    c.set('d', 4);
    expect([c.has('a'), c.has('c'), c.has('d')]).toEqual([false, true, true]);
  });

  it('refuses a capacity that is not a positive number, as mnemonist does', () => {
    for (const bad of [0, -1, '3']) {
      expect(() => new LRUCache(bad as number)).toThrow(
        expect.objectContaining({ name: 'InvalidInput', message: 'mnemonist/lru-cache: capacity should be positive number.' }),
      );
      expect(() => new Mnemonist(bad as number)).toThrow('mnemonist/lru-cache: capacity should be positive number.');
    }
  });
});
