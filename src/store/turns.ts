/**
 * The turns of one key's recordings: which call of a request each recording answers, and which
 * calls belong to recordings that are gone (docs/modes.md rules 16 and 18).
 *
 * A key's recordings are served in store order, the order in which their appends were
 * acknowledged. Each carries `repeat`: how many recordings of its key its writer knew of before
 * it (of its test's, for a record that names a test; of every one, for a record naming none).
 * A writer knows what the store held when it opened and what it appended itself, so its number
 * says its turn only when no other writer was recording the key at the same time:
 *
 * - A writer that did not see another's appends counts fewer than came before (two writers open
 *   before either recorded both say 0; a third opening after them says 2). A `repeat` at or
 *   behind the recording's turn is no news: the recording takes the next turn, and the turns
 *   after it follow the store (a number behind must not pull them back, or the third writer's
 *   2 would read as a gap after the second's 0).
 * - A `repeat` ahead of the turn says its writer knew of recordings that are not before it now:
 *   lost (a damaged record, or one an export left out before this store was imported from it),
 *   or replaced by a record run after this writer counted them (a record run replaces what runs
 *   that had ended when it opened recorded, which a writer open alongside them counted). Only
 *   the first is damage; {@link aheadIsLoss} tells them apart.
 */

/** What a recording says of its turn: its `repeat`, the test and the run its record names. */
export interface TurnMark {
  repeat: number | undefined;
  test: string | undefined;
  run: unknown;
}

/**
 * The turns passed so far among one key's recordings, lost ones included: of all of them (what
 * a record that names no test counts) and of each test's (what a test's record counts).
 *
 * @example
 * const t = new Turns();
 * t.pass(undefined); t.pass(undefined);
 * t.turn(undefined)   // 2: the next recording takes the 3rd turn
 * t.ahead(undefined, 0) // 0: behind (a writer that did not see the first two): no gap
 */
export class Turns {
  private all = 0;
  private byTest: Map<string, number> | undefined;

  /** The turn (from 0) the next recording of `test` takes; undefined: one naming no test. */
  turn(test: string | undefined): number {
    return test === undefined ? this.all : (this.byTest?.get(test) ?? 0);
  }

  /** How many turns a recording of `test` numbered `repeat` is ahead of its turn (0: none). */
  ahead(test: string | undefined, repeat: number | undefined): number {
    return repeat === undefined ? 0 : Math.max(0, repeat - this.turn(test));
  }

  /** Passes one turn of `test`'s: a recording served (or skipped), or the call of a lost one. */
  pass(test: string | undefined): void {
    this.all++;
    if (test !== undefined) (this.byTest ??= new Map()).set(test, this.turn(test) + 1);
  }
}

/**
 * Whether a recording whose `repeat` is ahead of its turn follows recordings lost (E_TAPE_DAMAGED
 * for their calls), rather than ones a record run replaced after its writer counted them.
 *
 * - `damageBefore`: the store lost a record to damage, before this one, that may be of its key:
 *   lost.
 * - Otherwise, a replacement leaves the replacing run's own recordings of the key on the store
 *   (a record run replaces a key's recordings only once it recorded the key itself): among
 *   `others` (the key's other recordings; those of another test are not counted for a recording
 *   that names one: it counted its test's alone, and another test's run replaces none of them),
 *   one of another run means the number may be a replaced recording's, not damage. With none,
 *   nobody replaced anything: the recordings were lost before this store was written (an
 *   import of an export that left damaged records out).
 *
 * Numbers ahead on a key several runs recorded are thus served in store order, with no lost
 * turn: a replay never refuses an acknowledged recording for numbers writers gave it apart.
 *
 * @example
 * aheadIsLoss({ repeat: 2, test: undefined, run: 'r' }, [{ repeat: 0, test: undefined, run: 'r' }], false) // true
 * aheadIsLoss({ repeat: 1, test: undefined, run: 'w' }, [{ repeat: 1, test: undefined, run: 'x' }], false) // false
 */
export function aheadIsLoss(mark: TurnMark, others: Iterable<TurnMark>, damageBefore: boolean): boolean {
  if (damageBefore) return true;
  for (const o of others) {
    if (mark.test !== undefined && o.test !== undefined && o.test !== mark.test) continue;
    if (o.run !== mark.run) return false;
  }
  return true;
}
