/**
 * Browser bundles' stand-in for ./options.ts (package.json "browser"): a page takes the chaos
 * header off its requests but gets no faults, so the fault names, their checks and the
 * `--chaos` text form stay out of its 100 KB budget. Asking for faults is refused at once.
 */
import { chaosUnavailable } from './refused.ts';
import type { ChaosOptions, FaultFamily, FaultName } from './options.ts';

export type { ChaosOptions, FaultFamily, FaultName } from './options.ts';
export { CHAOS_HEADER, withoutChaosHeader } from './header.ts';

/** Faults are not part of a page: any options are refused. */
export function checkChaos(_opts: ChaosOptions, _family: FaultFamily): [FaultName, number][] {
  throw chaosUnavailable();
}
