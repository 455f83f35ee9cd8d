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
 *
 * An earlier turn whose caller has gone (it aborted, or disconnected, after the answer started:
 * the answer is still read on for its record, docs/modes.md rule 10) holds the later ones only
 * while its upstream keeps sending. Once a later turn waits on it and it has been silent for
 * STALLED_MS, it steps aside (`left`): the later answers are recorded and end without it, and it
 * is recorded after them if it ever completes. Nobody read that answer, so a stalled upstream
 * must not hold a complete one its caller is reading until the idle timeout (10 minutes). A
 * turn whose caller still waits keeps its place: its caller is held by the same upstream.
 */

// Silence after which an earlier answer nobody reads stops holding later identical ones: far
// longer than the gaps of a stream being sent, far shorter than the idle timeout.
const STALLED_MS = 2000;

/** One request's place among the identical requests being recorded. End it whatever happens. */
export class RecordTurn {
  /** Resolves when the turn ends. */
  readonly ended: Promise<void>;
  private end!: () => void;
  private done = false;
  private hurried = false;
  private hurryFn: (() => void) | undefined;
  /** Resolves when later turns may go on: this one ended, or stepped aside (made on demand). */
  private passed: Promise<void> | undefined;
  private pass: (() => void) | undefined;
  /** Set once its caller has gone: when its upstream last sent, and what to say on stepping aside. */
  private gone: { lastHeard: () => number; route: string; warn: (message: string) => void; timer?: ReturnType<typeof setTimeout> } | undefined;
  private aside = false;

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
    return Promise.all(this.prior.map((t) => t.passedOn())).then(() => undefined);
  }

  /** Resolves once later turns need not wait for this one (ended, or stepped aside). */
  private passedOn(): Promise<void> {
    if (this.done || this.aside) return Promise.resolve();
    return (this.passed ??= new Promise<void>((r) => (this.pass = r)));
  }

  /**
   * Its caller has gone and the answer is read on for its record: from now on it holds later
   * turns only while its upstream sends (`lastHeard`: when its last chunk came, a
   * performance.now() time, as the chunk log being recorded keeps anyway). Stepping aside is told
   * through `warn`, naming `route`: the order of the recordings is no longer the order the
   * requests were sent.
   *
   * @example
   * signal.addEventListener('abort', () => turn.left('POST /v1/chat/completions', (m) => deck.warnOnce(m), () => log.lastAt()))
   */
  left(route: string, warn: (message: string) => void, lastHeard: () => number): void {
    if (this.done || this.gone) return;
    this.gone = { lastHeard, route, warn };
    if (this.hurried) this.watch();
  }

  /** Steps aside once its upstream has been silent for STALLED_MS (a later turn waits on it). */
  private watch(): void {
    const g = this.gone;
    if (!g || g.timer || this.done) return;
    const check = () => {
      if (this.done) return;
      const quiet = performance.now() - g.lastHeard();
      if (quiet < STALLED_MS) {
        g.timer = setTimeout(check, STALLED_MS - quiet);
        (g.timer as { unref?: () => void }).unref?.();
        return;
      }
      this.aside = true;
      g.warn(
        `tapedeck: ${g.route}: an identical request sent earlier, whose caller had gone, got nothing from the upstream for ${STALLED_MS / 1000} s in the middle of its answer; the answers to the identical requests after it are recorded and end without waiting for it (it is recorded after them if it completes, so replay serves it after them).`,
      );
      this.pass?.();
    };
    check();
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
    if (this.done) return;
    this.hurryFn?.();
    this.watch();
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
    if (this.gone?.timer) clearTimeout(this.gone.timer);
    this.leave(this);
    this.end();
    this.pass?.();
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
