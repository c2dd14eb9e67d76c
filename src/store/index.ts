export { openStores, type Stores } from './stores.js';
export { RedisConnection, storeUnavailable, type RedisClient, type StoreHealth } from './redis/index.js';
