// An LRU cache with optional time-to-live, and memoize built on it.

export interface CacheOptions<K, V> {
  /** At most this many entries; the least recently used goes first. */
  maxSize: number;
  /** Entries older than this many milliseconds are treated as missing. */
  ttlMs?: number;
  /** The clock, in milliseconds (tests pass a fake one). */
  now?: () => number;
  /** Called with each entry evicted for space or expiry. */
  onEvict?: (key: K, value: V, reason: EvictionReason) => void;
}

export type EvictionReason = 'size' | 'expired' | 'deleted';

export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  readonly hitRate: number;
}

interface Entry<V> {
  value: V;
  expires: number;
}

export class LRUCache<K, V> implements Iterable<[K, V]> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly options: Required<Omit<CacheOptions<K, V>, 'onEvict'>> & Pick<CacheOptions<K, V>, 'onEvict'>;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(options: CacheOptions<K, V>) {
    if (!Number.isInteger(options.maxSize) || options.maxSize < 1) {
      throw new RangeError(`maxSize must be a positive integer, got ${options.maxSize}`);
    }
    this.options = { ttlMs: Infinity, now: Date.now, ...options };
  }

  get size(): number {
    this.purgeExpired();
    return this.entries.size;
  }

  get stats(): CacheStats {
    const { hits, misses, evictions } = this;
    return { hits, misses, evictions, hitRate: hits + misses === 0 ? 0 : hits / (hits + misses) };
  }

  get(key: K): V | undefined {
    const entry = this.live(key);
    if (!entry) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Like `get`, but neither counts nor refreshes the entry's recency. */
  peek(key: K): V | undefined {
    return this.live(key)?.value;
  }

  has(key: K): boolean {
    return this.live(key) !== undefined;
  }

  set(key: K, value: V, ttlMs: number = this.options.ttlMs): this {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.options.now() + ttlMs });
    while (this.entries.size > this.options.maxSize) {
      const [oldest, entry] = this.entries.entries().next().value as [K, Entry<V>];
      this.entries.delete(oldest);
      this.evicted(oldest, entry, 'size');
    }
    return this;
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) {
      return false;
    }
    this.entries.delete(key);
    this.evicted(key, entry, 'deleted');
    return true;
  }

  /** The cached value, or `compute(key)` stored and returned. */
  getOrSet(key: K, compute: (key: K) => V): V {
    const cached = this.get(key);
    if (cached !== undefined) {
      return cached;
    }
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  keys(): K[] {
    this.purgeExpired();
    return [...this.entries.keys()];
  }

  *[Symbol.iterator](): Iterator<[K, V]> {
    for (const key of this.keys()) {
      yield [key, this.entries.get(key)!.value];
    }
  }

  private live(key: K): Entry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expires <= this.options.now()) {
      this.entries.delete(key);
      this.evicted(key, entry, 'expired');
      return undefined;
    }
    return entry;
  }

  /** Count and report an entry that its caller has just taken out. */
  private evicted(key: K, entry: Entry<V>, reason: EvictionReason): void {
    if (reason !== 'deleted') {
      this.evictions += 1;
    }
    this.options.onEvict?.(key, entry.value, reason);
  }

  private purgeExpired(): void {
    const now = this.options.now();
    for (const [key, entry] of [...this.entries]) {
      if (entry.expires <= now) {
        this.entries.delete(key);
        this.evicted(key, entry, 'expired');
      }
    }
  }
}

/** Cache `fn`'s results by a key made from its arguments (JSON by default). */
export function memoize<Args extends unknown[], R>(
  fn: (...args: Args) => R,
  { maxSize = 100, key = (...args: Args) => JSON.stringify(args) }: { maxSize?: number; key?: (...args: Args) => string } = {},
): ((...args: Args) => R) & { cache: LRUCache<string, R> } {
  const cache = new LRUCache<string, R>({ maxSize });
  const memoized = (...args: Args): R => {
    const k = key(...args);
    if (cache.has(k)) {
      return cache.get(k) as R;
    }
    const value = fn(...args);
    cache.set(k, value);
    return value;
  };
  return Object.assign(memoized, { cache });
}
