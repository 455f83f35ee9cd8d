/**
 * The error of a Redis namespace that holds nothing: no stored tape header and no record. In
 * Redis that is what a wrong URL, database or namespace looks like (a typo makes a new, empty
 * namespace), so commands that read a namespace (`pull`, `verify`, `prune`) stop there rather
 * than report an empty success: a `pull --force` would otherwise replace a tape with nothing.
 */
import { TapedeckError } from '../../errors.ts';
import { redisLocation } from './redis-damage.ts';

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
