/**
 * Identical MCP calls being recorded at the same time are stored in the order they were sent,
 * not in the order the server answered them: replay gives the k-th identical call the k-th
 * recording, so the first caller must find the first call's answer first. The same rule as the
 * proxy's record turns for HTTP (src/proxy/record-turns.ts, a layer above this one, so not
 * imported), without their `hurry`: an MCP answer is never a stream a caller reads later.
 */

/** One call's place among the identical calls being recorded. End it whatever happens. */
export interface CallTurn {
  /** Resolves once every identical call sent before this one has ended. */
  before(): Promise<void>;
  /** Ends the turn: its record is stored, or there will be none. Idempotent. */
  finish(): void;
}

/**
 * The turns of the calls being recorded, per record key.
 *
 * @example
 * const turns = new CallTurns()
 * const turn = turns.take(key) // when the call is sent
 * await turn.before(); await tape.append(rec); turn.finish()
 */
export class CallTurns {
  private readonly open = new Map<string, Promise<void>[]>();

  /** A turn after every turn of `key` not ended yet. */
  take(key: string): CallTurn {
    let queue = this.open.get(key);
    if (!queue) this.open.set(key, (queue = []));
    const q = queue;
    const prior = q.slice();
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    q.push(ended);
    let done = false;
    return {
      before: () => (prior.length === 0 ? Promise.resolve() : Promise.all(prior).then(() => undefined)),
      finish: () => {
        if (done) return;
        done = true;
        const i = q.indexOf(ended);
        if (i >= 0) q.splice(i, 1);
        if (q.length === 0 && this.open.get(key) === q) this.open.delete(key);
        end();
      },
    };
  }
}
