export { openStores, type Stores } from './stores.js';
// Types only: the Redis client library is loaded when store.kind is redis (see openStores), not at start-up.
export type { RedisConnection, RedisClient, StoreHealth } from './redis/index.js';
