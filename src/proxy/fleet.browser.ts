/**
 * Browser bundles' stand-in for ./fleet.ts (package.json "browser"): a page's tape is loaded into
 * the page and never shared with other proxies, so a deck there never asks a store for their
 * recordings (Deck.decideShared answers from the tape alone), and the fleet's code stays out of
 * the 100 KB budget.
 */
import type { Decision, DeckRequest } from './deck.ts';
import type { FleetDeck } from './fleet.ts';

export type { FleetDeck } from './fleet.ts';

/** Never made in a page: only a shared store (Redis) makes one. */
export class Fleet {
  constructor(private readonly deck: FleetDeck) {}

  /** The deck's own decision: nothing else shares the tape. */
  decide(req: DeckRequest): Decision {
    return this.deck.decide(req);
  }
}
