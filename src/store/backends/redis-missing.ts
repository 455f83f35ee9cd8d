/**
 * The error of a Redis namespace that holds nothing: no stored tape header and no record. In
 * Redis that is what a wrong URL, database or namespace looks like (a typo makes a new, empty
 * namespace), so commands that read a namespace (`pull`, `verify`, `prune`) stop there rather
 * than report an empty success: a `pull --force` would otherwise replace a tape with nothing.
 */
import { TapedeckError } from '../../errors.ts';
import { passwordNote, typedRedisUrl } from './redis-connection.ts';
import { redisCliTarget, redisLocation } from './redis-damage.ts';
import type { RedisRecords } from './redis.ts';

/**
 * E_TAPE_NOT_FOUND for an empty namespace, naming it (URL masked) and how to check it.
 *
 * @example
 * throw namespaceNotFound(store.url, store.namespace, 'nothing was written to keep.tape')
 */
export function namespaceNotFound(maskedUrl: string, namespace: string, consequence?: string): TapedeckError {
  const where = redisLocation(maskedUrl, namespace);
  return new TapedeckError('E_TAPE_NOT_FOUND', `${where} holds no recordings: the URL, database or namespace may be wrong${consequence ? `; ${consequence}` : ''}.`, {
    file: where,
    namespace,
    hint: 'Check the URL and the namespace (--namespace NS or ?namespace=NS; the default is tapedeck); tapedeck push <tape> <redis-url> --namespace NS fills one.',
  });
}

/**
 * E_STORE_DAMAGED for a namespace whose own keys (header, index, counter) are gone while
 * request keys still hold records: on a cluster, the master of the namespace's slot restarted
 * without persistence, and the records on the other masters survived. Without the index they
 * cannot be listed (a pull, verify or prune reads the index), though a replay still finds each
 * one when its request is asked.
 *
 * @example
 * throw indexLost(store.url, store.namespace, 6, 'nothing was written to keep.tape')
 */
export function indexLost(maskedUrl: string, namespace: string, keys: number, consequence?: string): TapedeckError {
  const where = redisLocation(maskedUrl, namespace);
  return new TapedeckError(
    'E_STORE_DAMAGED',
    `${where} lost its index (the namespace's header, index and counter are gone, as after a Redis restart without persistence), but ${keys} request key${keys === 1 ? ' still holds' : 's still hold'} records: they cannot be listed${consequence ? `; ${consequence}` : ''}.`,
    {
      file: where,
      namespace,
      keys,
      hint: `Push the tape the namespace was made from again: tapedeck push <tape> ${redisCliTarget(maskedUrl, namespace)}${passwordNote(typedRedisUrl(maskedUrl))} lists its request keys again (records still in Redis are not pushed twice); keep Redis persistent (appendonly yes).`,
    },
  );
}

/**
 * The error of a namespace that lists nothing: {@link indexLost} when request keys of it still
 * hold records (one SCAN of the keyspace tells), else {@link namespaceNotFound}.
 *
 * @example
 * if (header === undefined && records.length === 0) throw await missingNamespace(store, 'nothing to prune')
 */
export async function missingNamespace(store: Pick<RedisRecords, 'url' | 'namespace' | 'storedKeys'>, consequence?: string): Promise<TapedeckError> {
  const kept = (await store.storedKeys()).length;
  return kept > 0 ? indexLost(store.url, store.namespace, kept, consequence) : namespaceNotFound(store.url, store.namespace, consequence);
}
