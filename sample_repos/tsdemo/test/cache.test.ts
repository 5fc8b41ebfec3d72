import { describe, expect, it, vi } from 'vitest';

import { LRUCache, memoize, type EvictionReason } from '../src/cache.js';

function clock(start = 0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('LRUCache', () => {
  it('rejects a size that is not a positive integer', () => {
    expect(() => new LRUCache({ maxSize: 0 })).toThrow(RangeError);
    expect(() => new LRUCache({ maxSize: 1.5 })).toThrow(/positive integer/);
  });

  it('stores, reads and counts entries', () => {
    const cache = new LRUCache<string, number>({ maxSize: 3 });
    expect(cache.set('a', 1)).toBe(cache);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    expect(cache.get('zzz')).toBeUndefined();
    expect(cache.size).toBe(2);
    expect(cache.has('b')).toBe(true);
    expect(cache.has('c')).toBe(false);
  });

  it('evicts the least recently used entry', () => {
    const evicted: [string, number, EvictionReason][] = [];
    const cache = new LRUCache<string, number>({ maxSize: 2, onEvict: (k, v, r) => evicted.push([k, v, r]) });
    cache.set('a', 1).set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect(cache.keys()).toEqual(['a', 'c']);
    expect(evicted).toEqual([['b', 2, 'size']]);
  });

  it('setting an existing key refreshes it', () => {
    const cache = new LRUCache<string, number>({ maxSize: 2 });
    cache.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
    expect([...cache]).toEqual([['a', 10], ['c', 3]]);
  });

  it('peek neither refreshes nor counts', () => {
    const cache = new LRUCache<string, number>({ maxSize: 2 });
    cache.set('a', 1).set('b', 2);
    expect(cache.peek('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.stats).toEqual({ hits: 0, misses: 0, evictions: 1, hitRate: 0 });
  });

  it('delete removes an entry and tells whether there was one', () => {
    const onEvict = vi.fn();
    const cache = new LRUCache<string, number>({ maxSize: 2, onEvict });
    cache.set('a', 1);
    expect(cache.delete('a')).toBe(true);
    expect(cache.delete('a')).toBe(false);
    expect(cache.size).toBe(0);
    expect(onEvict).toHaveBeenCalledWith('a', 1, 'deleted');
    expect(cache.stats.evictions).toBe(0);
  });

  it('entries expire after the ttl', () => {
    const time = clock(1000);
    const onEvict = vi.fn();
    const cache = new LRUCache<string, string>({ maxSize: 10, ttlMs: 100, now: time.now, onEvict });
    cache.set('short', 'x', 10).set('long', 'y');
    time.advance(50);
    expect(cache.get('short')).toBeUndefined();
    expect(cache.get('long')).toBe('y');
    expect(onEvict).toHaveBeenCalledWith('short', 'x', 'expired');
    time.advance(100);
    expect(cache.size).toBe(0);
    expect(cache.stats.evictions).toBe(2);
  });

  it('keys and iteration skip expired entries', () => {
    const time = clock();
    const cache = new LRUCache<number, number>({ maxSize: 5, ttlMs: 10, now: time.now });
    cache.set(1, 1);
    time.advance(5);
    cache.set(2, 2);
    time.advance(6);
    expect(cache.keys()).toEqual([2]);
    expect([...cache]).toEqual([[2, 2]]);
  });

  it('tracks hits, misses and the hit rate', () => {
    const cache = new LRUCache<string, number>({ maxSize: 2 });
    cache.set('a', 1);
    cache.get('a');
    cache.get('a');
    cache.get('b');
    cache.get('a');
    expect(cache.stats).toEqual({ hits: 3, misses: 1, evictions: 0, hitRate: 0.75 });
  });

  it('getOrSet computes a missing value once', () => {
    const cache = new LRUCache<string, number>({ maxSize: 2 });
    const compute = vi.fn((key: string) => key.length);
    expect(cache.getOrSet('abc', compute)).toBe(3);
    expect(cache.getOrSet('abc', compute)).toBe(3);
    expect(compute).toHaveBeenCalledTimes(1);
  });
});

describe('memoize', () => {
  it('calls the function once per distinct arguments', () => {
    const slow = vi.fn((a: number, b: number) => a + b);
    const fast = memoize(slow);
    expect(fast(1, 2)).toBe(3);
    expect(fast(1, 2)).toBe(3);
    expect(fast(2, 1)).toBe(3);
    expect(slow).toHaveBeenCalledTimes(2);
    expect(fast.cache.size).toBe(2);
  });

  it('takes a key function and a size', () => {
    const lower = vi.fn((s: string) => s.toLowerCase());
    const fast = memoize(lower, { maxSize: 1, key: (s) => s.toLowerCase() });
    fast('ABC');
    fast('abc');
    fast('x');
    fast('ABC');
    expect(lower).toHaveBeenCalledTimes(3);
  });

  it('caches falsy results too', () => {
    const zero = vi.fn(() => 0);
    const fast = memoize(zero);
    fast();
    fast();
    expect(zero).toHaveBeenCalledTimes(1);
  });
});
