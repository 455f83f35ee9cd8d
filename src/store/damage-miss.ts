/**
 * A miss on a tape with damaged bytes: the recording of this very request may have been in them
 * (a request none of whose recordings survived is a miss, nothing says which call the lost ones
 * were), so the miss says so and where, rather than leaving the request to look changed. For the
 * deck (createFetch, the proxy: through src/proxy/damage-miss.ts, whose browser build leaves a
 * page's miss as it is) and ReplayCache.
 */
import { TapedeckError } from '../errors.ts';
import type { StoreWarning } from './backend.ts';
import type { RecordCollection } from './collection.ts';

/**
 * The load warning of a Redis namespace that lost its index (./backends/redis-backend.ts), if
 * `col` is one: a miss there is told in those words (here, and in its headline by the proxy's
 * empty-store-miss.ts).
 *
 * @example
 * lostIndexWarning(col)?.message // 'redis://… (namespace app) lost its index (…)'
 */
export function lostIndexWarning(col: RecordCollection<unknown> | undefined): StoreWarning | undefined {
  return col?.warnings.find((w) => w.code === 'E_STORE_DAMAGED');
}

/**
 * `miss` with a line naming where `col` (the deck's recordings) had damage at open and how to
 * see it; other errors, and a miss on a tape without damage, as they are.
 *
 * @example
 * missOnDamagedTape(miss, col, 'tapedeck verify chat.tape').message // '...\nThe tape is damaged at byte 789: ...'
 */
export function missOnDamagedTape(miss: TapedeckError, col: RecordCollection<unknown> | undefined, verifyCommand: string | undefined): TapedeckError {
  const at = col?.damageAt ?? [];
  // A tape whose record run never closed it (killed midway) may lack this very call.
  const note = col?.backend.missNote;
  if (note !== undefined && miss.code === 'E_MISS') miss = new TapedeckError('E_MISS', `${miss.message}\n${note}`, { ...miss.details, unclosedRun: true });
  if (at.length === 0 || miss.code !== 'E_MISS') return miss;
  // A Redis namespace that lost its index (a master restarted without persistence) has no bytes
  // to point at: its own note says what was lost and how to list the rest again.
  const lostIndex = lostIndexWarning(col);
  if (lostIndex) return new TapedeckError('E_MISS', `${miss.message}\nThis request's recordings may have been lost with the namespace's index: ${lostIndex.message}`, { ...miss.details, damaged: [...at] });
  const where = at.length === 1 ? `byte ${at[0]}` : `bytes ${at.slice(0, 3).join(', ')}${at.length > 3 ? ', ...' : ''}`;
  const verify = verifyCommand ? `\`${verifyCommand}\`` : '`tapedeck verify` on the tape';
  return new TapedeckError('E_MISS', `${miss.message}\nThe tape is damaged at ${where}: this request's recording may have been lost there; ${verify} shows the damage.`, { ...miss.details, damaged: [...at] });
}
