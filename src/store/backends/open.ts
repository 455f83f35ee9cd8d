/**
 * One way to name a store everywhere a user gives one (`tapedeck serve --store`, `createFetch({
 * store })`, `ReplayCache.open(store)`): a tape file path, a `redis://` / `rediss://` URL, or a
 * backend object made by hand.
 */
import type { RecordBackend } from '../backend.ts';
import type { TapeLockOptions } from '../tape-file.ts';
import { isRedisUrl } from './redis-connection.ts';
import { RedisBackend, type RedisStoreOptions } from './redis-backend.ts';
import { TapeBackend } from './tape.ts';

/** Options for the backend a store string names. */
export interface StoreBackendOptions {
  /** Tape files: lock timing. */
  lock?: TapeLockOptions;
  /** Redis: namespace, default TTL, connection options. */
  redis?: RedisStoreOptions;
}

/** Whether a value is a store backend object rather than a path or URL. */
export function isBackend(v: unknown): v is RecordBackend {
  return v !== null && typeof v === 'object' && typeof (v as RecordBackend).load === 'function' && typeof (v as RecordBackend).append === 'function';
}

/**
 * The backend a store names: a backend object as it is, a Redis URL as a {@link RedisBackend}
 * (connected on first use), anything else as a tape file path.
 *
 * @example
 * storeBackend('recordings/app.tape')                        // TapeBackend
 * storeBackend('redis://127.0.0.1:6379/0?namespace=my-app')  // RedisBackend
 */
export function storeBackend(store: string | RecordBackend, opts: StoreBackendOptions = {}): RecordBackend {
  if (isBackend(store)) return store;
  if (isRedisUrl(store)) return new RedisBackend(store, opts.redis);
  return new TapeBackend(store, opts.lock ? { lock: opts.lock } : {});
}
