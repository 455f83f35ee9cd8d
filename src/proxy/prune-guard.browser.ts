/**
 * prune-guard.ts for browser builds: a page injects no faults (faults on demand are left out of
 * its bundle), so nothing keeps its unused recordings from being judged.
 */

/** Always true in a page (see prune-guard.ts). */
export function pruneMayRemove(_faults: unknown, _tape: unknown, _warn: unknown): boolean {
  return true;
}

/** A page records nothing: none kept, none asked for (see prune-guard.ts). */
export function keptOf(_mode: unknown, _col: unknown): { kept?: string[] } {
  return {};
}

export function askedFor(_col: unknown, _p: unknown, _to: unknown): void {}

/** Nothing pruned, nothing to say: pruneUnused is not an option of a page's replay fetch (see prune-guard.ts). */
export async function sayPruned(_report: unknown, _pruned: unknown, _sessions: unknown, _tape: unknown, _warn: unknown): Promise<void> {}

