/**
 * RecordCollection.open's check of its `kind`, where the package runs in Node (a page's bundle
 * has the stub ./kind-check.browser.ts: its budget has no room, and TypeScript refuses a wrong
 * kind anyway). In plain JavaScript, a record kind's factory given as the kind itself (`kind:
 * cacheRecords` for `cacheRecords([])`) recorded as asked, and every later open of that store
 * then failed with Node's "this.kind.keysOf is not a function", naming neither the option nor
 * the fix.
 */
import { TapedeckError } from '../errors.ts';
import { describeArgument } from '../option-names.ts';
import { cacheRecords, httpRecords } from './records.ts';

/**
 * Throws E_ARG unless `kind` is a record kind (an object with keysOf), saying how to make one
 * when it is one of the factories.
 *
 * @example
 * checkRecordKind(cacheRecords) // throws E_ARG: … got the function cacheRecords itself … kind: cacheRecords([])
 */
export function checkRecordKind(kind: unknown): void {
  if (typeof kind === 'object' && kind !== null && typeof (kind as { keysOf?: unknown }).keysOf === 'function') return;
  // Compared by identity: a bundle may rename the functions (cacheRecords2).
  const factory = kind === cacheRecords ? 'cacheRecords' : kind === httpRecords ? 'httpRecords' : undefined;
  const got = factory !== undefined ? `the function ${factory} itself` : typeof kind === 'function' ? 'a function' : describeArgument(kind);
  const call = factory === 'httpRecords' ? 'httpRecords()' : 'cacheRecords([])';
  throw new TapedeckError('E_ARG', `RecordCollection.open's kind must be a record kind; got ${got}.`, {
    option: 'kind',
    hint: `Pass the kind a factory makes: kind: ${call} (cacheRecords(ignoredArgs) for ReplayCache records, httpRecords() for the proxy's and createFetch's, replayRecords for trace-token replays).`,
  });
}
