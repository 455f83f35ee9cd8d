/**
 * Which host's recordings answer a request (docs/matching.md, "Hosts"): the deck files each
 * recording under its route and the origin it was recorded for (src/store/origins.ts), and a
 * request is looked for among the recordings of its own origin first, then among those that
 * name no origin (tapes written before origins were stored). A recording of another origin is
 * not served for it: an app that falls back from one provider to another with the same path
 * and body would get the first one's answer for the second one's request, silently. The miss
 * says where the request was recorded instead, and how to let any host's recording answer
 * (`hostMatch: 'any'`, `--host-match any`), which tries the other hosts' recordings last.
 *
 * A request whose origin is unknown (a proxy replaying with no upstream) compares no hosts,
 * and neither does createReplayFetch (browser playback, in a page or in Node): browser builds
 * take host-match.browser.ts, and file recordings under their routes alone.
 */
import { TapedeckError } from '../errors.ts';
import { missHeadline, recordHow, type MissEntry } from '../match/diagnose.ts';
import type { RecordCollection } from '../store/collection.ts';
import { filedName, originInName, originKey } from '../store/origins.ts';
import { httpRecordKey, type MatchKind } from '../store/records.ts';
import type { Decision, DeckRequest } from './deck.ts';
import { pastError, type PastErrorDeck } from './past-error.ts';

/** How hosts take part in matching: `'origin'` (default) compares them, `'any'` lets any host's recording answer, its own first. */
export type HostMatchMode = 'origin' | 'any';

/** What the deck found for a request among the recordings filed under one name. */
export type Found = Extract<Decision, { kind: 'replay' }> | { kind: 'miss'; miss: TapedeckError };

/** The deck's lookup among the recordings of `route` filed under `name` (the route, or the route and an origin). */
export type FindIn = (req: DeckRequest, route: string, name: string) => Found;

/** What a HostMatch reads of the deck's collection. */
type HostCollection = Pick<RecordCollection<unknown>, 'count' | 'shared' | 'indexes' | 'keyAt'>;

/** How a deck finds a request's recording (a HostMatch; in a page, by the route alone). */
export interface HostLookup {
  find(req: DeckRequest, route: string): Found;
}

/**
 * Throws E_ARG for a hostMatch option that is neither `'origin'` nor `'any'`.
 *
 * @example
 * checkHostMatch('any') // fine
 * checkHostMatch(false) // throws E_ARG
 */
export function checkHostMatch(value: unknown): void {
  if (value === undefined || value === 'origin' || value === 'any') return;
  throw new TapedeckError('E_ARG', `Invalid hostMatch ${JSON.stringify(value)}.`, {
    option: 'hostMatch',
    hint: "Use 'origin' (the default: a recording answers requests to the origin it was recorded for) or 'any' (any host's recording answers, the request's own host's first; tapedeck serve --host-match any).",
  });
}

/** The option that lets any host's recording answer, as the entry point spells it. */
function anyHostOption(entry: MissEntry): string {
  return entry.kind === 'proxy' ? '--host-match any' : "hostMatch: 'any'";
}

/** The match kind and key a miss was for, when it says (a match function's miss does not). */
function askedOf(miss: TapedeckError): { match: MatchKind; key: string } | undefined {
  const { key, match } = miss.details;
  if (typeof key !== 'string') return undefined;
  return { match: match === 'http' || match === 'json' ? match : 'llm', key };
}

const list = (items: readonly string[]): string => (items.length < 3 ? items.join(' and ') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/**
 * Finds a request's recording host by host (see the top), through the deck's own lookup
 * (`findIn`) among the recordings filed under each name (`routes`: the deck's, by name; `col`:
 * its collection).
 *
 * @example
 * const hosts = new HostMatch((req, route, name) => deck.find(req, route, name), routes, col, 'origin', { kind: 'fetch' }, 'app.tape')
 * const found = hosts.find({ method: 'POST', url: '/v1/chat/completions', origin: 'https://api.groq.com', headers, body }, 'POST /v1/chat/completions')
 */
export class HostMatch implements HostLookup {
  constructor(
    private readonly findIn: FindIn,
    private readonly routes: ReadonlyMap<string, unknown>,
    private readonly col: HostCollection | undefined,
    private readonly mode: HostMatchMode,
    private readonly entry: MissEntry,
    private readonly tape: string | undefined,
  ) {}

  find(req: DeckRequest, route: string): Found {
    if (this.shared) this.learn();
    // Browser playback compares no hosts, in Node as in a page.
    const own = this.entry.kind === 'browser' ? undefined : this.nameOf(route, req.origin, req.upstreamPath);
    // The request's own host: the one lookup of a request its host's recordings answer. Skipped
    // on a tape with recordings of the route that name no host and none for this one (a tape
    // written before origins were stored): no miss is made there.
    if (own !== undefined && (this.has(own) || !this.has(route))) {
      const f = this.findIn(req, route, own);
      return f.kind === 'replay' ? f : this.elsewhere(req, route, own, f.miss);
    }
    return this.elsewhere(req, route, own, undefined);
  }

  /** The name of `route` filed for `origin` under the upstream path `under` (kept while they repeat: requests mostly do). */
  private nameOf(route: string, origin: string | undefined, under: string | undefined): string | undefined {
    if (origin === undefined) return undefined;
    if (route !== this.last.route || origin !== this.last.origin || under !== this.last.under) this.last = { route, origin, under, name: filedName(route, origin, under) };
    return this.last.name;
  }

  private last: { route: string; origin: string; under: string | undefined; name: string } = { route: '', origin: '', under: undefined, name: '' };

  /** Whether other writers add recordings meanwhile (a shared store): a name not filed here may hold some. */
  private get shared(): boolean {
    return this.col?.shared === true;
  }

  /** Whether recordings are filed under `name`: loaded at open or recorded since by the deck, or filed since from other writers. */
  private has(name: string): boolean {
    return this.routes.has(name) || this.learned.has(name);
  }

  /**
   * A shared store: the names the recordings filed since the last look are filed under (another
   * proxy's, asked for on a miss, may be of a host new to this one, which the deck's names do not
   * list). Those loaded at open are the deck's.
   */
  private learn(): void {
    const col = this.col!;
    const n = col.indexes;
    if (this.seen < 0) this.seen = n;
    for (; this.seen < n; this.seen++) {
      const key = col.keyAt(this.seen);
      const name = key.slice(0, key.indexOf('\u0000'));
      if (!this.routes.has(name)) this.learned.add(name);
    }
  }

  private readonly learned = new Set<string>();
  /** The collection index the next look at a shared store starts at (-1: before the first). */
  private seen = -1;

  /** How many recordings of a request (`asked`) are filed under `name`. */
  private count(name: string, asked: { match: MatchKind; key: string } | undefined): number {
    return asked === undefined ? 0 : (this.col?.count(httpRecordKey(name, asked.match, asked.key)).recorded ?? 0);
  }

  /** The names `route` is filed under with an origin after it, in the order they were first filed (kept until a name is added). */
  private hostedNames(route: string): string[] {
    if (this.routes.size + this.learned.size !== this.namesAt) {
      this.hosted.clear();
      this.namesAt = this.routes.size + this.learned.size;
    }
    let names = this.hosted.get(route);
    if (names === undefined) {
      names = [];
      for (const name of this.routes.keys()) if (originInName(name, route) !== undefined) names.push(name);
      for (const name of this.learned) if (originInName(name, route) !== undefined) names.push(name);
      this.hosted.set(route, names);
    }
    return names;
  }

  private readonly hosted = new Map<string, string[]>();
  private namesAt = -1;

  /**
   * A request its own host's recordings do not answer (`ownMiss`, when they were looked at):
   * under an upstream path prefix, those of its host that name no prefix (recorded before
   * prefixes were stored); those that name no host; then (hosts not compared) the other hosts'
   * recordings, other prefixes' included; else the miss, which says where this request was
   * recorded.
   */
  private elsewhere(req: DeckRequest, route: string, own: string | undefined, ownMiss: TapedeckError | undefined): Found {
    const misses: { name: string; miss: TapedeckError }[] = own !== undefined && ownMiss !== undefined ? [{ name: own, miss: ownMiss }] : [];
    let asked = ownMiss && askedOf(ownMiss);
    const tryName = (name: string): Found | undefined => {
      const f = this.findIn(req, route, name);
      if (f.kind === 'replay') return f;
      misses.push({ name, miss: f.miss });
      asked ??= askedOf(f.miss);
      return undefined;
    };
    // The miss that says the most: where this request's recordings are (all used), else where
    // the route has recordings (the closest of them), else the first.
    const best = (): Found => ({ kind: 'miss', miss: (misses.find((m) => this.count(m.name, asked) > 0) ?? misses.find((m) => this.has(m.name)) ?? misses[0]!).miss });
    // Its host has recordings of this very request (all used, or damaged): another host's
    // answer does not stand in for the call past them.
    if (ownMiss !== undefined && (asked === undefined || this.count(own!, asked) > 0)) return best();
    const bare = req.upstreamPath && own !== undefined ? filedName(route, req.origin) : undefined;
    if (bare !== undefined && this.has(bare)) {
      const f = tryName(bare);
      if (f) return f;
    }
    // Recordings that name no host answer any host (and a request with no known host that no
    // recording of its route was filed for is told its miss here).
    if (this.has(route) || (own === undefined && this.hostedNames(route).length === 0)) {
      const f = tryName(route);
      if (f) return f;
      // On a shared store other writers may have recorded it for this host since it opened.
      const mine = own !== undefined && ownMiss === undefined && this.shared ? tryName(own) : undefined;
      if (mine) return mine;
    }
    const others = this.hostedNames(route).filter((name) => name !== own && name !== bare);
    if (others.length > 0 && (this.mode === 'any' || own === undefined)) {
      // Hosts not compared: any host's recordings, in the order their names were first filed.
      for (const name of others) {
        const f = tryName(name);
        if (f) return f;
      }
    }
    if (others.length === 0 || this.mode === 'any' || own === undefined) return best();
    const holding = others.filter((name) => this.count(name, asked) > 0);
    // The route recorded for this host or for none, and not with this request: a request that differs.
    if (holding.length === 0 && (this.has(own!) || this.has(route) || (bare !== undefined && this.has(bare)))) return best();
    return { kind: 'miss', miss: this.hostMiss(route, req.origin!, req.upstreamPath, (holding.length > 0 ? holding : others).map((n) => originInName(n, route)!), holding.length > 0, (best() as { miss: TapedeckError }).miss) };
  }

  /**
   * The miss of a request recorded for other hosts only (`same`: this very request; else other
   * requests of its route), with the origins in its details (each with its upstream path prefix
   * after it, if any: `under` is the request's).
   */
  private hostMiss(route: string, origin: string, under: string | undefined, recordedFor: string[], same: boolean, miss: TapedeckError): TapedeckError {
    const shown = route.length > 80 ? `${route.slice(0, 79)}…` : route;
    const mine = originKey(origin) + (under ?? '');
    const difference = same ? `recorded for ${list(recordedFor)}, not for ${mine} (this request)` : `no recording for ${shown} at ${mine} (this request); the route was recorded for ${list(recordedFor)}`;
    const how = recordHow(this.entry);
    // Letting another host's answer stand in only makes sense for the same request.
    const fix = same ? `${how}, or ${anyHostOption(this.entry)} if both hosts give the same answers` : how;
    return new TapedeckError('E_MISS', missHeadline(difference, fix), {
      ...miss.details,
      file: this.tape,
      route,
      origin: mine,
      recordedFor,
      difference,
      kind: 'host',
      fix,
      fixes: [`${fix[0]!.toUpperCase()}${fix.slice(1)}${this.tape ? ` (recordings in ${this.tape})` : ''}.`],
      report: `No recording in ${this.tape ?? 'the store'} for ${route} at ${mine}${same ? ' (this request is recorded for ' : ' (the route is recorded for '}${list(recordedFor)}). Recordings answer requests to the origin they were recorded for, under the same upstream path prefix (a loopback host's port is not compared); recordings that name no origin answer any host.`,
    });
  }
}

/**
 * How a deck finds a request's recording: a HostMatch over its names and collection, with its
 * options' hostMatch and tape (a page's deck compares no hosts: host-match.browser.ts), the
 * deck's entry for its misses, and in update mode with recordErrors ./past-error.ts.
 *
 * @example
 * this.hosts = openHostMatch((req, route, name) => this.find(req, route, name), this.routes, col, opts, this)
 */
export function openHostMatch(findIn: FindIn, routes: ReadonlyMap<string, unknown>, col: HostCollection | undefined, opts: { hostMatch?: HostMatchMode; tape?: string }, deck: PastErrorDeck & { readonly entry: MissEntry }): HostLookup {
  const hosts = new HostMatch(findIn, routes, col, opts.hostMatch ?? 'origin', deck.entry, opts.tape);
  // Update mode with recordErrors: a retry past a recorded error goes to the API (./past-error.ts).
  // Decided once: the deck's mode and options do not change, and replay's lookups stay as they were.
  return deck.mode === 'update' && deck.recordErrors ? { find: (req, route) => pastError(deck, () => hosts.find(req, route)) } : hosts;
}
