// The canonical form of a request view's tool list, kept by the list's exact bytes.
//
// Why: tools cost far more per byte than messages (their schemas are many small objects whose
// members arrive out of canonical order), and the requests of one conversation repeat the
// same tool list while the messages grow. The request key is the digest of the whole view
// with `tools` as its last member in canonical order (messages/input < model < options <
// tools), so the core canonicalizes the view without its tools and the key's digest ends with
// the canonical tools kept here (pathHashesOfUtf8's tail). SHA-256 of those bytes is still
// paid on every request: no hash state before them can be reused.
//
// A list is found only by comparing all of its bytes with an entry's (never by a hash of
// them), so an entry answers exactly the text it was made from; the canonical form of a JSON
// text is a function of that text alone, whatever the provider or the rest of the body.

import { canonicalizeJSON } from '../../core/index.ts';

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
export const toolsCacheCounts = { hits: 0, misses: 0 };

const hasBuffer = typeof Buffer !== 'undefined';

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  // Node's Buffer#equals is a memcmp; a loop elsewhere.
  if (hasBuffer) return Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

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
  if (tools.length < MIN_BYTES || tools.length > MAX_BYTES) return undefined;
  for (let i = 0; i < PREFIX.length; i++) if (tools[i] !== PREFIX[i]) return undefined;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (!equal(e.key, tools)) continue;
    if (i > 0) {
      entries.splice(i, 1);
      entries.unshift(e);
    }
    toolsCacheCounts.hits++;
    return e.tail;
  }
  toolsCacheCounts.misses++;
  const canonical = canonicalizeJSON(tools.subarray(PREFIX.length));
  const tail = new Uint8Array(PREFIX.length + canonical.length + 1);
  tail.set(PREFIX);
  tail.set(canonical, PREFIX.length);
  tail[tail.length - 1] = CLOSE;
  // The key is copied: `tools` is a view of memory the next request reuses.
  entries.unshift({ key: tools.slice(), tail });
  if (entries.length > ENTRIES) entries.pop();
  return tail;
}

/** Forgets every entry (tests and benchmarks: a conversation's first request). */
export function clearToolsCache(): void {
  entries.length = 0;
}
