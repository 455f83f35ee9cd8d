/**
 * A deck on a shared store (Redis) among other proxies (docs/redis.md, "A fleet"): where this
 * proxy's own recordings do not answer a request, or it repeats one past the last recording
 * this proxy knows of, the store is asked for what the others recorded of that key since. Apart
 * from ./deck.ts because a page never shares its tape: browser bundles get ./fleet.browser.ts.
 */
import { TapedeckError } from '../errors.ts';
import type { MissEntry } from '../match/diagnose.ts';
import type { RecordBackend } from '../store/backend.ts';
import { storeBackend } from '../store/backends/open.ts';
import { Deck, type Decision, type DeckOptions, type DeckRequest } from './deck.ts';
import type { HttpRecord } from '../store/records.ts';

type Replay = Extract<Decision, { kind: 'replay' }>;

/** What the fleet needs of its deck. */
export interface FleetDeck {
  /** The deck's own decision (throws E_MISS in replay mode). */
  decide(req: DeckRequest): Decision;
  /** The request looked up again, once the store has filed more recordings. */
  lookAgain(req: DeckRequest): Replay | { kind: 'miss'; miss: TapedeckError };
  /** Files the store's recordings of `key` made since; resolves with how many were added. */
  refresh(key: string): Promise<number>;
  /** The deck's routes: their fast paths (bodies of one recording) are forgotten once more are filed. */
  routes: ReadonlyMap<string, { fast: { clear(): void } }>;
  /**
   * The deck's options and miss entry point when it opened the store empty or missing (it knows
   * of the recordings made since only by request key); undefined once it holds recordings.
   */
  stale(): [DeckOptions, MissEntry] | undefined;
  warnOnce(message: string): void;
}

/**
 * How long a repeat of a key (a request past the last recording this proxy knows of it) serves
 * the last one again without asking the store for newer ones once more.
 */
const REPEAT_ASK_MS = 250;

/**
 * The decisions of a deck on a shared store.
 *
 * @example
 * const fleet = new Fleet({ decide, lookAgain, refresh: (key) => col.refresh({ kind: 'http', key }), warnOnce })
 * const d = fleet.decide(req) // a Decision, or a promise of one when the store is asked
 */
export class Fleet {
  /** Recordings served so far: serving one again is a repeat (see repeat()). */
  private readonly served = new WeakSet<HttpRecord>();
  /** By request key: when a repeat last asked the store for later recordings, and the ask in flight (shared by the repeats that come meanwhile). */
  private readonly asked = new Map<string, number>();
  private readonly asking = new Map<string, Promise<number>>();

  constructor(private readonly deck: FleetDeck) {}

  /**
   * The deck's decision, and where its own recordings do not answer, the one after asking the
   * store. A miss with the store unreachable fails with E_STORE_UNAVAILABLE in replay mode;
   * update mode then goes to the upstream (and says why once). A replayed answer this proxy
   * holds is returned as it is, not as a promise, so the proxy can write it in the same tick the
   * body arrived.
   */
  decide(req: DeckRequest): Decision | Promise<Decision> {
    let miss: TapedeckError | undefined;
    let first: Decision | undefined;
    try {
      first = this.deck.decide(req);
    } catch (e) {
      if (!(e instanceof TapedeckError && e.code === 'E_MISS')) throw e;
      miss = e;
    }
    // A recording this proxy already holds is answered at once, as from a tape file: the store
    // is asked only when it might hold more. As a promise, every replayed answer on a shared
    // store waited for a later tick and took the handler's promise path.
    if (first?.kind === 'replay') {
      if (!this.served.has(first.record)) {
        this.served.add(first.record);
        return first;
      }
      // Served before: a repeat past the last recording this proxy knows of its key. Another
      // proxy may have recorded the next turn since: ask the store for that one key before
      // serving the last one again. A key repeated in a loop (a benchmark, a polling client)
      // asks at most every REPEAT_ASK_MS and is answered at once in between: asking on every
      // repeat made each one wait for Redis (one proxy's added p50 0.03 -> 0.8 ms at 16
      // connections), and as a promise every repeat took the handler's slower path. Another
      // proxy's new recording is still served within that time.
      if (!this.asking.has(first.record.key) && performance.now() - (this.asked.get(first.record.key) ?? -Infinity) < REPEAT_ASK_MS) return first;
      return this.repeat(req, first);
    }
    return this.past(req, first, miss);
  }

  /**
   * A repeat: the recordings other proxies made of its key since are filed first, and the
   * request is looked up again, so it gets the next one in its turn; with none (or the store
   * unreachable: said once), the repeat as decided.
   */
  private async repeat(req: DeckRequest, first: Replay): Promise<Decision> {
    const key = first.record.key;
    let ask = this.asking.get(key);
    if (ask === undefined) {
      ask = this.deck.refresh(key).finally(() => {
        this.asking.delete(key);
        this.asked.set(key, performance.now());
      });
      this.asking.set(key, ask);
    }
    let added = 0;
    try {
      added = await ask;
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      this.deck.warnOnce(`tapedeck: ${e.code}: ${e.message} Serving the last recording again without the shared recordings.`);
    }
    if (added === 0) return first;
    // A body of one recording was answered from its route's fast path, which would answer it so
    // again: the key has more recordings now, and the next one is this call's turn.
    for (const r of this.deck.routes.values()) r.fast.clear();
    const again = this.deck.lookAgain(req);
    if (again.kind !== 'replay') return first;
    this.served.add(again.record);
    return again;
  }

  /** Past this proxy's own recordings (a miss, or update mode's upstream): what other proxies recorded since. */
  private async past(req: DeckRequest, first: Decision | undefined, miss: TapedeckError | undefined): Promise<Decision> {
    const key = miss ? miss.details.key : first?.kind === 'upstream' ? first.prepared?.key : undefined;
    if (typeof key !== 'string') {
      if (miss) throw miss;
      return first!;
    }
    let added = 0;
    try {
      added = await this.deck.refresh(key);
    } catch (e) {
      if (miss || !(e instanceof TapedeckError)) throw e;
      this.deck.warnOnce(`tapedeck: ${e.code}: ${e.message} Answering from the upstream without the shared recordings.`);
    }
    if (added > 0) {
      for (const r of this.deck.routes.values()) r.fast.clear();
      const again = this.deck.lookAgain(req);
      if (again.kind === 'replay') {
        this.served.add(again.record);
        return again;
      }
    }
    if (miss) throw (await this.missAfresh(req, miss)) ?? miss;
    return first!;
  }

  /**
   * A miss of a deck that opened its store empty or missing, explained again by a deck opened on
   * the store as it is now: its own explanation ("holds no recordings", the URL may be wrong)
   * knows nothing of what other proxies recorded since. Undefined when there is no better one.
   * Costs a load of the store, on such a miss only.
   */
  private async missAfresh(req: DeckRequest, miss: TapedeckError): Promise<TapedeckError | undefined> {
    const stale = this.deck.stale();
    if (stale === undefined || miss.details.kind !== 'no-recordings') return undefined;
    const [opts, entry] = stale;
    // A new handle: the deck's own stays as it is (closing the fresh deck closes its backend).
    const store = typeof opts.store === 'string' ? storeBackend(opts.store) : (opts.store as RecordBackend | undefined)?.another?.();
    if (store === undefined) return undefined;
    let fresh: Deck | undefined;
    try {
      fresh = await Deck.open({ ...opts, store, chaos: undefined, pruneUnused: false, onWarning: () => {} }, entry);
      if (fresh.mode !== 'replay' || fresh.stats().recordings === 0) return undefined;
      fresh.decide(req);
      return undefined;
    } catch (e) {
      return e instanceof TapedeckError && e.code === 'E_MISS' ? e : undefined;
    } finally {
      await fresh?.close().catch(() => {});
    }
  }
}
