/**
 * Identical requests recorded at the same time are stored in the order they were sent, not in
 * the order their answers came back. Replay serves a request's recordings in stored order, one
 * per call: so when five identical requests go out at once (sampling an answer five times) and
 * the first one's answer comes back last, the first call must still get the first recording.
 * Stored in arrival order of the answers, replay handed each call another call's answer.
 *
 * Each request sent upstream to be recorded takes a turn among the requests of its key still in
 * flight; its record is appended only once every earlier turn has ended (appended, or gone
 * without a record: an error, a refused or unfinished answer, an abort). Its answer's end waits
 * for that, as it waits for its record to be durable. An earlier turn whose answer nobody reads
 * yet (a stream the caller opened and left for later) is asked to read it to the end by itself
 * (`hurry`), so a caller that reads the later stream first never waits on itself.
 */

/** One request's place among the identical requests being recorded. End it whatever happens. */
export class RecordTurn {
  /** Resolves when the turn ends. */
  readonly ended: Promise<void>;
  private end!: () => void;
  private done = false;
  private hurried = false;
  private hurryFn: (() => void) | undefined;

  constructor(
    /** The turns of this key taken before this one and not ended then. */
    private readonly prior: readonly RecordTurn[],
    private readonly leave: (t: RecordTurn) => void,
  ) {
    this.ended = new Promise<void>((r) => (this.end = r));
  }

  /**
   * Resolves once every earlier turn of the key has ended; asks those whose answer is not being
   * read to read it themselves.
   *
   * @example
   * await turn.before(); deck.appendRecord(rec); turn.finish()
   */
  before(): Promise<void> {
    if (this.prior.length === 0) return Promise.resolve();
    for (const t of this.prior) t.hurry();
    return Promise.all(this.prior.map((t) => t.ended)).then(() => undefined);
  }

  /**
   * What reads this turn's answer to the end without its caller (a stream being recorded). Run
   * at once if a later turn already waits.
   *
   * @example
   * turn.onHurry(() => void drain())
   */
  onHurry(fn: () => void): void {
    this.hurryFn = fn;
    if (this.hurried && !this.done) fn();
  }

  private hurry(): void {
    if (this.hurried) return;
    this.hurried = true;
    if (!this.done) this.hurryFn?.();
  }

  /**
   * Ends the turn: its record is appended, or there will be none. Idempotent.
   *
   * @example
   * try { ... } finally { turn.finish() }
   */
  finish(): void {
    if (this.done) return;
    this.done = true;
    this.hurryFn = undefined;
    this.leave(this);
    this.end();
  }
}

/**
 * The turns of the requests being recorded, per record key.
 *
 * @example
 * const turn = turns.take(key) // then turn.before() before appending, turn.finish() after
 */
export class RecordTurns {
  private readonly open = new Map<string, RecordTurn[]>();

  /** A turn after every turn of `key` not ended yet. */
  take(key: string): RecordTurn {
    let q = this.open.get(key);
    if (!q) this.open.set(key, (q = []));
    const queue = q;
    const turn = new RecordTurn(queue.slice(), (t) => {
      const i = queue.indexOf(t);
      if (i >= 0) queue.splice(i, 1);
      if (queue.length === 0 && this.open.get(key) === queue) this.open.delete(key);
    });
    queue.push(turn);
    return turn;
  }
}
