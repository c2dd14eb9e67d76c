export {
  RedisConnection,
  storeUnavailable,
  type RedisClient,
  type RedisConnectionOptions,
  type StoreHealth,
} from './connection.js';
export { RedisSessions, type RedisSessionOptions } from './sessions.js';
