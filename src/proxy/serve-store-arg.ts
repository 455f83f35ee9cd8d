/**
 * `tapedeck serve --store` and `--tape`: where the proxy keeps its recordings, checked before it
 * starts. The library takes a tape path as a store too, so without this a mistyped URL
 * (`redis:/cache:6379`, `http://cache:6379`) would be opened as a tape file in the working
 * directory: a fleet that believes it shares Redis would replay misses, or record into a local
 * file no other worker sees.
 */
import { TapedeckError } from '../errors.ts';
import { isRedisUrl, maskRedisUrl } from '../store/backends/redis-connection.ts';

/**
 * Throws `E_ARG` (a usage error, exit 2) when `--store` is not a `redis://` or `rediss://` URL,
 * or when both `--tape` and `--store` are given (one of them would be ignored).
 *
 * @example
 * checkServeStore(undefined, 'redis://127.0.0.1:6379/0?namespace=ci') // fine
 * checkServeStore(undefined, 'redis:/127.0.0.1:6379/0')               // throws E_ARG
 */
export function checkServeStore(tape: string | undefined, store: string | undefined): void {
  if (store === undefined) return;
  if (tape !== undefined) {
    throw new TapedeckError('E_ARG', `--tape ${tape} and --store ${maskRedisUrl(store)} both say where to keep the recordings; tapedeck serve uses one.`, {
      hint: 'Give --tape FILE for a tape file, or --store redis://host:6379/0?namespace=NAME for a shared Redis store, not both.',
    });
  }
  if (!isRedisUrl(store)) {
    throw new TapedeckError('E_ARG', `--store ${maskRedisUrl(store)} is not a redis:// or rediss:// URL.`, {
      hint: 'Use --store redis://[user:password@]host[:port][/db][?namespace=NAME] (rediss:// for TLS); for a tape file, use --tape FILE.',
    });
  }
}
