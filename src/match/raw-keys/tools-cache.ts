// The canonical form of a request view's tool list, kept by the list's exact bytes.
//
// Why: tools cost far more per byte than messages (their schemas are many small objects whose
// members arrive out of canonical order), and the requests of one conversation repeat the
// same tool list while the messages grow. The request key is the digest of the whole view
// with `tools` as its last member in canonical order (messages/input < model < options <
// tools), so the core canonicalizes the view without its tools and the key's digest ends with
// the canonical tools kept here (pathHashesOfUtf8's tail). SHA-256 of those bytes is still
// paid on every request: no hash state before them can be reused. The body's own bytes of the
// list are kept too (KeptTools), so that the core's index and view skip them next time.
//
// A list is found only by comparing all of its bytes with an entry's (never by a hash of
// them), so an entry answers exactly the text it was made from; the canonical form of a JSON
// text is a function of that text alone, whatever the provider or the rest of the body.

import type { RequestViewSkip } from '../../core/engine.ts';
import { sameBytes } from '../../bytes.ts';
import { canonicalOfUtf8 } from '../../core/index.ts';

const PREFIX = new TextEncoder().encode(',"tools":');
const CLOSE = 0x7d; // }
// Below this a list costs about as much to compare and splice as to canonicalize with the view.
const MIN_BYTES = 512;
// Entries are bounded in number and size: at most ENTRIES * 2 * MAX_BYTES held.
const MAX_BYTES = 256 * 1024;
const ENTRIES = 8;

interface Entry {
  /** The view's bytes `,"tools":[...]`, as the view writer made them. */
  readonly key: Uint8Array;
  /** `,"tools":` + canonical(list) + `}`: what ends the canonical view. */
  readonly tail: Uint8Array;
}

/** Most recently used first. */
const entries: Entry[] = [];

/** Hits and misses in this process. Internal: tests prove which path a request took. */
export const toolsCacheCounts = { hits: 0, misses: 0, skipped: 0 };

/**
 * The canonical end of a view whose tool list is `tools` (the view's bytes `,"tools":[...]`):
 * `,"tools":` + canonical list + `}`, from the cache or made and kept; undefined for a list too
 * small or too large to be worth keeping (the caller writes it into the view as before). A list
 * that is not JSON throws the core's TapedeckError, as the view's own canonicalization would.
 *
 * @example
 * const tail = toolsTail(cv.tools); // then pathHashesOfUtf8(viewWithoutTools, 'messages', tail)
 */
export function toolsTail(tools: Uint8Array): Uint8Array | undefined {
  return keptToolsTail(tools) ?? newToolsTail(tools);
}

/** Whether a list of this view's bytes is kept here at all: its size and its `,"tools":`. */
function keepable(tools: Uint8Array): boolean {
  if (tools.length < MIN_BYTES || tools.length > MAX_BYTES) return false;
  for (let i = 0; i < PREFIX.length; i++) if (tools[i] !== PREFIX[i]) return false;
  return true;
}

/**
 * toolsTail() of a list kept already, else undefined, without calling into the core: `tools`
 * may be a view of the core's memory (a hit needs no copy of it).
 */
export function keptToolsTail(tools: Uint8Array): Uint8Array | undefined {
  if (!keepable(tools)) return undefined;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (!sameBytes(e.key, tools)) continue;
    if (i > 0) {
      entries.splice(i, 1);
      entries.unshift(e);
    }
    toolsCacheCounts.hits++;
    return e.tail;
  }
  return undefined;
}

/** toolsTail() of a list not kept yet (keptToolsTail() said so): made and kept. */
export function newToolsTail(tools: Uint8Array): Uint8Array | undefined {
  if (!keepable(tools)) return undefined;
  toolsCacheCounts.misses++;
  // The key is copied first: `tools` may be a view of memory the core call below reuses.
  const key = tools.slice();
  // The view's bytes are valid UTF-8: ranges of a checked body and literals.
  const canonical = canonicalOfUtf8(key.subarray(PREFIX.length));
  const tail = new Uint8Array(PREFIX.length + canonical.length + 1);
  tail.set(PREFIX);
  tail.set(canonical, PREFIX.length);
  tail[tail.length - 1] = CLOSE;
  entries.unshift({ key, tail });
  if (entries.length > ENTRIES) entries.pop();
  return tail;
}

/**
 * A root `tools` value as a body carried it, kept with what the core's view made of it, so
 * that the next request of the conversation need not index it nor write it again: where the
 * same bytes sit in the next body (as far from its end, or from its start, as here), the core
 * is told to skip them (RequestViewSkip) and the view ends with `tail`.
 */
export interface KeptTools {
  /** The body's bytes of the value, `[...]`. */
  readonly raw: Uint8Array;
  readonly fromStart: number;
  readonly fromEnd: number;
  /** The provider the view was written for, and the detection's verdict on these tools. */
  readonly provider: number;
  readonly verdict: number;
  /** Where the value sat: the root's `tools` (false), or its `toolConfig`'s (Bedrock Converse). */
  readonly inToolConfig: boolean;
  /** Tool names in the view's order (undefined: none). */
  readonly names: readonly (string | undefined)[];
  /** `,"tools":` + canonical list + `}`. */
  readonly tail: Uint8Array;
}

/** Most recently used first. */
const kept: KeptTools[] = [];

/** A kept `tools` value found in a body: where it is (the skip for the core) and what was kept. */
export interface FoundTools {
  readonly skip: RequestViewSkip;
  readonly tools: KeptTools;
}

/** Whether `k.raw` is at `at` in `bytes`, byte for byte. */
function at(bytes: Uint8Array, k: KeptTools, p: number): boolean {
  const n = k.raw.length;
  return p >= 0 && p + n <= bytes.length && bytes[p] === 0x5b && bytes[p + n - 1] === 0x5d && sameBytes(bytes.subarray(p, p + n), k.raw);
}

/**
 * A kept `tools` value found in `bytes`, and where: the skip for the core, or undefined. The
 * core skips it only if a root member named `tools` starts there; anywhere else the body is
 * indexed whole.
 */
export function findKeptTools(bytes: Uint8Array): FoundTools | undefined {
  for (const k of kept) {
    for (const p of [bytes.length - k.fromEnd, k.fromStart]) {
      if (at(bytes, k, p)) return { skip: { start: p, end: p + k.raw.length, verdict: k.verdict, inToolConfig: k.inToolConfig }, tools: k };
    }
  }
  return undefined;
}

/** Keeps a `tools` value whose view was written whole (and whose tail is kept). */
export function keepTools(bytes: Uint8Array, start: number, end: number, provider: number, verdict: number, names: readonly (string | undefined)[], tail: Uint8Array, inToolConfig = false): void {
  if (end - start > MAX_BYTES) return;
  for (let i = 0; i < kept.length; i++) {
    if (sameBytes(kept[i]!.raw, bytes.subarray(start, end))) kept.splice(i--, 1);
  }
  kept.unshift({ raw: bytes.slice(start, end), fromStart: start, fromEnd: bytes.length - start, provider, verdict, inToolConfig, names: [...names], tail });
  if (kept.length > ENTRIES) kept.pop();
}

/** Marks a kept value used (most recent first). */
export function usedTools(k: KeptTools): void {
  const i = kept.indexOf(k);
  if (i > 0) {
    kept.splice(i, 1);
    kept.unshift(k);
  }
  toolsCacheCounts.skipped++;
}

/** Forgets every entry (tests and benchmarks: a conversation's first request). */
export function clearToolsCache(): void {
  entries.length = 0;
  kept.length = 0;
}
