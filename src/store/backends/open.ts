/**
 * One way to name a store everywhere a user gives one (`tapedeck serve --store`, `createFetch({
 * store })`, `ReplayCache.open(store)`): a tape file path, a `redis://` / `rediss://` URL, or a
 * backend object made by hand.
 */
import { TapedeckError } from '../../errors.ts';
import type { RecordBackend } from '../backend.ts';
import type { TapeLockOptions } from '../tape-file.ts';
import { isRedisUrl, parseRedisUrl } from './redis-connection.ts';
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
  checkStore(store);
  return new TapeBackend(store, opts.lock ? { lock: opts.lock } : {});
}

/**
 * Refuses a store that cannot be opened as given: a Redis URL that does not parse (E_ARG from
 * parseRedisUrl, its password masked), or a mistyped URL taken for a tape path: `redis:/host:6379` (one slash), `redis//host`,
 * `http://host:6379`. Taken as a path, it made folders named `redis:` or `http:` and recorded
 * into a local file while the user thought the recordings went to Redis. A one-letter scheme
 * is a Windows drive (`C:/tapes/app.tape`) and passes. A path starting with `~/` is refused
 * too: nothing here expands it.
 *
 * @example
 * checkStore('tapes/app.tape')       // passes
 * checkStore('redis://127.0.0.1:6379') // passes
 * checkStore('redis://127.0.0.1:6379?nmespace=app') // throws E_ARG: unknown query parameter "nmespace"
 * checkStore('redis:/127.0.0.1:6379') // throws E_ARG: write redis://127.0.0.1:6379
 * checkStore('~/tapes/app.tape')     // throws E_ARG: only a shell expands ~
 */
export function checkStore(path: string): void {
  // A URL pasted with a leading space or tab (YAML, .env, a CI secret) was taken for a tape
  // path: recordings went to a local file under a folder named " redis:", never to Redis.
  const lead = /^\s+(?=[a-z][a-z0-9+.-]*:\/)/i.exec(path);
  if (lead) {
    const url = path.slice(lead[0].length).trimEnd().replace(/^([a-z][a-z0-9+.-]*:\/*)[^/@\s]*@/i, '$1***@');
    throw new TapedeckError('E_ARG', `The store ${JSON.stringify(url)} starts with whitespace (${JSON.stringify(lead[0])}): it would be taken for a tape path and recorded into a local file.`, {
      path: url,
      hint: `Remove the whitespace before the URL where it is set (quoted in YAML or .env?): ${url}`,
    });
  }
  // A Redis URL is parsed now: a bad one (a misspelt `?nmespace=`) was a 500 at the first call,
  // which SDKs retry, instead of an error where the fetch or proxy is made.
  if (/^rediss?:\/\//i.test(path)) {
    parseRedisUrl(path);
    return;
  }
  // `~` is expanded by a shell only: from code (or quoted) `~/tapes/x.tape` was a folder named
  // `~` in the current directory, which a later `rm -rf ~` meant to clean it takes for the home.
  const home = path === '~' ? path : /^~[^\\/]*[\\/]/.exec(path)?.[0];
  if (home !== undefined) {
    throw new TapedeckError('E_ARG', `The tape path "${path}" starts with ~, which only a shell expands: it would be recorded under a folder named ~ in the current directory.`, {
      path,
      hint: `Give the home folder itself (join(os.homedir(), '${path.slice(home.length) || 'chat.tape'}') in code, $HOME/... unquoted in a shell), or a path in the project (tapes/chat.tape).`,
    });
  }
  const redisTypo = /^(rediss?)(?::\/?(?!\/)|\/\/)(.*)$/i.exec(path);
  const url = /^([a-z][a-z0-9+.-]+):\/\//i.exec(path);
  if (!redisTypo && !url) return;
  // A password in the URL is not repeated in the message.
  const shown = path.replace(/^([a-z][a-z0-9+.-]*:?\/*)[^/@\s]*@/i, '$1***@');
  const fix = redisTypo
    ? `for a Redis store write ${redisTypo[1]!.toLowerCase()}://${redisTypo[2]!.replace(/[^/@\s]*@/, '***@')} (two slashes after the colon)`
    : `a store is a tape file path (tapes/app.tape) or a Redis URL (redis://host:6379/0, rediss:// for TLS); a ${url![1]!.toLowerCase()}: URL is neither`;
  throw new TapedeckError('E_ARG', `The store "${shown}" is not a tape path or a Redis URL: it would be recorded into a local file of that name.`, {
    path: shown,
    hint: `Fix: ${fix}.`,
  });
}
