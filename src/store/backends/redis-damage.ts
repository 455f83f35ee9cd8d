/**
 * Records of a Redis namespace that cannot be read, told in Redis terms: the request key, the
 * sequence number, and the hash and field that hold the bytes (what `redis-cli HGET` takes), never
 * a tape's byte offset or frame checksum, which a namespace does not have. Loading skips such a
 * record (redis-backend.ts), `tapedeck pull` leaves it out of the tape, `tapedeck verify
 * <redis-url>` lists it and `tapedeck prune <redis-url>` removes it (src/store/redis-cli.ts).
 */
import { decodePayload } from '../tape-codec.ts';
import { typedRedisUrl } from './redis-connection.ts';
import { collectionKeyOf, recordKeys, type StoredRecord } from './redis.ts';

/**
 * Where a stored record is, for messages.
 *
 * @example
 * redisRecordPlace('my-app', { key: 'http:9f86', seq: 7 })
 * // 'record 7 under http:9f86 (Redis hash my-app:{my-app:http:9f86}:r, field 7)'
 */
export function redisRecordPlace(namespace: string, r: { key: string; seq: number }): string {
  return `record ${r.seq} under ${r.key} (Redis hash ${recordKeys(namespace, r.key)[0]}, field ${r.seq})`;
}

/**
 * Why a stored record cannot be read, as words that follow "is" (undefined: it can be): its bytes
 * do not name the key it is filed under (what loading checks, since it indexes records without
 * decoding them), or, with `decode`, they do not decode whole (what `tapedeck verify` checks on
 * a tape, so a pulled tape verifies).
 *
 * @example
 * redisRecordDamage({ key: 'http:9f86', seq: 7, payload: Buffer.from('garbage') }, { decode: true })
 * // 'not decodable msgpack (Data read, but end of buffer not reached 103)'
 */
export function redisRecordDamage(r: StoredRecord, opts: { decode: boolean }): string | undefined {
  if (opts.decode) {
    try {
      decodePayload(r.payload);
    } catch (e) {
      return `not decodable msgpack (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  let named: string | undefined;
  try {
    named = collectionKeyOf(r.payload);
  } catch {
    named = undefined;
  }
  if (named === r.key) return undefined;
  return `malformed (${r.payload.length} bytes that do not read as a record of that key)`;
}

/**
 * A namespace as messages name it: the URL (its password masked, its query left out) and the
 * namespace, as the Redis backend's `location` does (redis-backend.ts).
 *
 * @example
 * redisLocation('redis://app:***@cache:6379/0?namespace=ci', 'ci') // 'redis://app:***@cache:6379/0 (namespace ci)'
 */
export function redisLocation(maskedUrl: string, namespace: string): string {
  return `${maskedUrl.replace(/\?.*$/, '')} (namespace ${namespace})`;
}

/**
 * A namespace as the command line takes it, for the commands messages suggest: the URL (its query
 * left out, `<password>` where the password goes: the mask run as written is a wrong password)
 * quoted for a shell, and `--namespace`.
 *
 * @example
 * redisCliTarget('redis://app:***@cache:6379/0?namespace=ci', 'ci') // "'redis://app:<password>@cache:6379/0' --namespace ci"
 */
export function redisCliTarget(maskedUrl: string, namespace: string): string {
  return `'${typedRedisUrl(maskedUrl.replace(/\?.*$/, ''))}' --namespace ${namespace}`;
}
