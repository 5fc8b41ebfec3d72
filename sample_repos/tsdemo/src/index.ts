export * from './result.js';
export { TypedEmitter, type EventMap, type Listener, type Subscription } from './emitter.js';
export { LRUCache, memoize, type CacheOptions, type CacheStats, type EvictionReason } from './cache.js';
export * from './query.js';
export * as schema from './schema.js';
export * as semver from './semver.js';
