/*
 * Request digests straight from the raw bytes of a body: the same key, message hashes, path
 * hashes and signature as requestKeys(), without JSON.parse of the body or building the view
 * as JavaScript objects.
 *
 * Why this design (measured on the 36 KB, 50-message benchmark body, bench/match.mjs): the
 * general path spends ~90 us in JSON.parse, ~45 us decoding UTF-8, ~50 us normalizing and ~80 us
 * in JSON.stringify of the view before the one core call (~85 us) even starts; parsing and
 * normalizing a body with its long strings and tool schemas cut out still cost ~135 us of
 * JavaScript. What normalization needs to look at is small (roles, part types, call ids,
 * names); what it copies is large (message text, tool schemas, unknown members). So:
 *   1. the core indexes the bytes (assembly/tape.ts: one record per value, byte ranges only);
 *   2. a walk (raw-keys/: one file per provider's shape) reads the index where the provider's
 *      normalizer would look, and writes the normalized view
 *      as JSON text into a byte buffer: literals it makes, and byte ranges of the body for
 *      everything normalize.ts copies (in any key order, any spelling: the core canonicalizes);
 *   3. one core call canonicalizes that text and hashes the view and each message
 *      (pathHashes with { member: 'messages' }), exactly as requestKeys() does with its view.
 * The top-level arguments (model, options, context) are small: they go through normalize.ts
 * itself, parsed member by member, so those rules are the reference's by construction.
 *
 * normalize.ts stays the reference. This is a second implementation of its message, part and
 * tool rules, held to it by differential tests (test/match/raw-keys.test.ts: fixtures of every
 * shape, generated bodies, the request-key vectors). Anything it does not handle natively, it
 * declines (returns undefined) and the caller takes the reference path, which also produces
 * every error: a body this path cannot key is never reported from here. The index rejects
 * every fault the reference's strict reader rejects (duplicate names, lone surrogates,
 * overflowing numbers), also in the members the view drops.
 *
 * The walk is itself the slow part once the bytes are indexed: ~70-80 us of the ~180 us an
 * M chat body took (a few hundred small calls, member tables and strings). So the core first
 * writes the view on its own (assembly/view.ts) for the constructs it knows, which are what
 * SDKs send, and the walk takes the bodies it declines. Attachment parts it leaves as holes,
 * filled by the reference one part at a time (raw-keys/core.ts); a part kept from an earlier
 * request is spliced in as its canonical text where the view lies. The core writes the messages
 * as canonical text (values the body spelled otherwise made canonical where they land) and
 * records where each starts, so that once the tool list is kept (a conversation's later
 * requests) each message is hashed where it lies, with no canonicalizing pass over the view
 * (raw-keys/core.ts inPlace()); step 3 above remains for the rest.
 *
 * This file picks the path for a body (the core's view, a provider's walk, or the provider
 * module's normalizer on the parsed body) and keeps the counters; raw-keys/walk.ts is the walk
 * over the index, raw-keys/out.ts the output buffer, raw-keys/view.ts the shared end of a view
 * and its one core call, raw-keys/tools-cache.ts the canonical tool lists kept between
 * requests. Browser bundles swap this file for raw-keys.browser.ts, which leaves the whole
 * folder out.
 *
 * What a conversation repeats is not redone: its tool list (kept by the list's exact bytes: the
 * core skips them where they sit as far from the body's end as before, and the key's digest
 * ends with their kept canonical form) and its normalized top level (kept by its exact text,
 * raw-keys/core.ts). A conversation's first request pays the full price. Where the time of a
 * later one goes (M chat body, ~100-120 us of CPU on the shared 2-core machine;
 * docs/benchmarks.md): SHA-256 of what the key needs ~57% (node:crypto: the 50 messages, the 49
 * chain steps, the whole view), the index and the core's view ~20%, values made canonical in
 * place ~4%, the JavaScript around the calls ~11%. Hashing is the floor: node:crypto's SHA-NI
 * is the fastest engine here, and ~0.3 us of each of its ~100 calls is the call itself.
 */

import { coreRequestView, jsonTape } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { normalizeRequest as normalizeModule, rawKeysAllowed, routeShapeOf } from '../providers/index.ts';
import type { BuiltinProvider, NormalizeOptions } from '../providers/types.ts';
import type { RequestDigests, Signature } from './matcher.ts';
import { ChatWalk, digests, OLLAMA_KEPT, PROVIDERS } from './raw-keys/chat.ts';
import { CONVERSE_CORE, converseDigests } from './raw-keys/converse.ts';
import { coreDigests, lastInPlace, moduleCoreDigests, OLLAMA_CORE, ollamaCoreDigests, PROVIDER_CODE } from './raw-keys/core.ts';
import { GEMINI_CORE, geminiDigests } from './raw-keys/gemini.ts';
import { ollamaDigests } from './raw-keys/ollama.ts';
import { decoder, Out } from './raw-keys/out.ts';
import { findKeptTools } from './raw-keys/tools-cache.ts';
import { DECLINE, F_CHECK_KEYS, T_OBJECT } from './raw-keys/walk.ts';
import { keyRequest } from './raw-keys/view.ts';
import { viewDigests } from './view-digests.ts';

const encoder = new TextEncoder();

// node:buffer's isUtf8 (native, GB/s) where there is one; a fatal TextDecoder elsewhere.
const nodeIsUtf8 = ((globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:buffer') as
  | { isUtf8?: (b: Uint8Array) => boolean }
  | undefined)?.isUtf8;
const fatal = new TextDecoder('utf-8', { fatal: true });
function isUtf8(b: Uint8Array): boolean {
  if (nodeIsUtf8) return nodeIsUtf8(b);
  try {
    fatal.decode(b);
    return true;
  } catch {
    return false;
  }
}

/**
 * How often this path answered and declined in this process. Internal (not exported from the
 * package entries): the tests read it to prove that the public entry points (requestDigests,
 * the matcher) really take this path for the common request shapes, which equal digests alone
 * cannot show. `core`: chat-family bodies keyed from the core's own view; `gemini`, `converse`,
 * `ollama`: bodies of those shapes keyed here (by the core's view or the walk); `geminiCore`,
 * `converseCore`, `ollamaCore`: those keyed from the core's own view. `inPlace`: answers whose
 * messages the core wrote as canonical text, hashed where they lay (no canonicalizing pass).
 */
export const rawPathCounts = { answered: 0, declined: 0, core: 0, gemini: 0, converse: 0, ollama: 0, geminiCore: 0, converseCore: 0, ollamaCore: 0, inPlace: 0 };

/**
 * Request digests of a raw body (UTF-8 bytes or JSON text), identical to requestKeys()'s, or
 * undefined when this path leaves the body to requestKeys(): a backend without the structural
 * index (the TypeScript engine), volatileKeys, volatileText, a body with an error, and the few constructs
 * listed where they are met below.
 *
 * @example
 * rawRequestDigests(bytes) ?? requestKeys(bytes) // same digests either way
 */
export function rawRequestDigests(request: Uint8Array | string, opts: NormalizeOptions = {}): RequestDigests | undefined {
  const r = attempt(request, opts);
  if (r === undefined) rawPathCounts.declined++;
  else rawPathCounts.answered++;
  return r;
}

/** No answer yet: every answer sets keyRequest.model. */
const UNSET = Symbol('unset');

/**
 * The request key and signature of a raw body, as requestKey() gives them, with the model the
 * view names (the URL's for APIs that put it there, else the body's), or undefined where
 * rawRequestDigests() declines. For a writer storing a record (the deck's record path), which
 * keeps these and no message or path hashes.
 *
 * @example
 * rawRequestKey(bytes, { endpoint: { method: 'POST', url: '/v1/chat/completions' } })?.key === requestKey(JSON.parse(text)).key
 */
export function rawRequestKey(request: Uint8Array, opts: NormalizeOptions = {}): { key: string; signature: Signature; model: unknown } | undefined {
  keyRequest.model = UNSET;
  keyRequest.keyOnly = true;
  let d: RequestDigests | undefined;
  try {
    d = rawRequestDigests(request, opts);
  } finally {
    keyRequest.keyOnly = false;
  }
  const model = keyRequest.model;
  keyRequest.model = undefined;
  return d === undefined || model === UNSET ? undefined : { key: d.key, signature: d.signature, model };
}

function attempt(request: Uint8Array | string, opts: NormalizeOptions): RequestDigests | undefined {
  if (opts === null || typeof opts !== 'object') return undefined;
  if (opts.volatileKeys !== undefined && (!Array.isArray(opts.volatileKeys) || opts.volatileKeys.length > 0)) return undefined;
  // Volatile text is replaced in the normalized messages: the object path keys it (the core's
  // view and this walk hash message text as it is).
  if (opts.volatileText !== undefined && (!Array.isArray(opts.volatileText) || opts.volatileText.length > 0)) return undefined;
  if (opts.provider !== undefined && !PROVIDERS.includes(opts.provider)) return undefined;
  // A shape of another provider module (by the endpoint's route): the walk knows the chat
  // family only, so that module's normalize reads the parsed body.
  if (opts.endpoint !== undefined && !rawKeysAllowed(opts)) return moduleDigests(request, opts);
  // Only an absent option takes its default; null is the reference's E_ARG.
  if (opts.ignoreArgs === null) return undefined;
  const ignoreArgs = opts.ignoreArgs ?? [];
  if (!Array.isArray(ignoreArgs) || ignoreArgs.some((k) => typeof k !== 'string')) return undefined;
  const bytes = utf8Of(request);
  if (bytes === undefined) return undefined;
  try {
    const code = opts.provider === undefined ? 0 : PROVIDER_CODE[opts.provider as BuiltinProvider];
    // A tool list kept from an earlier request of the conversation, in the same place: the
    // core skips it (raw-keys/tools-cache.ts). Kept for another provider: the body again, whole.
    const known = findKeptTools(bytes);
    let cv = coreRequestView(bytes, code, known?.skip);
    if (cv !== null && cv !== undefined && !(cv instanceof Uint32Array) && cv.skipped && cv.provider !== known!.tools.provider) cv = coreRequestView(bytes, code);
    if (cv === undefined) return undefined;
    if (cv !== null && !(cv instanceof Uint32Array)) {
      const fromCore = coreDigests(bytes, cv, ignoreArgs, known?.tools);
      if (fromCore !== null) {
        rawPathCounts.core++;
        if (lastInPlace) rawPathCounts.inPlace++;
        return fromCore;
      }
    }
    // The index the core declined from, else made here (a backend or build without the view).
    const tape = cv instanceof Uint32Array ? cv : jsonTape(bytes);
    if (tape === undefined || tape.length === 0 || (tape[0]! & 0xff) !== T_OBJECT) return undefined;
    const w = new ChatWalk(bytes, tape);
    // Objects whose member names the index did not compare (escaped names, many members): a
    // duplicate is an error for the reference wherever it is, kept or dropped.
    for (let i = 0; i < tape.length; i += 8) if ((tape[i]! & F_CHECK_KEYS) !== 0) w.members(i >>> 3);
    return digests(w, opts, ignoreArgs);
  } catch (e) {
    if (e === DECLINE || e instanceof TapedeckError || e instanceof SyntaxError) return undefined;
    throw e;
  } finally {
    Out.release();
  }
}

/**
 * A body's UTF-8 bytes, or undefined when it has none: a body given as bytes must be UTF-8
 * (docs/hash-spec.md, "Errors": E_UTF8); the reference rejects it, so the raw paths decline
 * rather than key bytes they would decode leniently.
 */
function utf8Of(request: Uint8Array | string): Uint8Array | undefined {
  if (typeof request === 'string') return request.isWellFormed() ? encoder.encode(request) : undefined;
  return isUtf8(request) ? request : undefined;
}

/**
 * Digests of a body of a provider module's own shape (Gemini, ...). Gemini and Converse bodies
 * are written by the core's own view (raw-keys/core.ts), or by their walk over the index where
 * it declines; an Ollama chat body by the chat walk in its Ollama mode. Anything else: the body
 * checked by the core's index instead of the strict reader's canonical pass (the same faults, a
 * fifth of the time), parsed, normalized by its module, and the view hashed from its JSON text
 * in one core call (the view of parsed JSON is JSON data, so its text is the same canonical
 * value, without walking it as JavaScript objects). Any error leaves the body to the reference
 * path, which reports it.
 */
function moduleDigests(request: Uint8Array | string, opts: NormalizeOptions): RequestDigests | undefined {
  const bytes = utf8Of(request);
  if (bytes === undefined) return undefined;
  let w: ChatWalk;
  try {
    const route = routeShapeOf(opts.endpoint);
    const ignoreArgs = opts.ignoreArgs ?? [];
    // Gemini and Converse bodies SDKs send: the core writes the view itself (assembly/view.ts);
    // what it declines, the shape's walk here takes, from the index the core made.
    let cv: ReturnType<typeof coreRequestView> = null;
    const core = route === 'gemini' ? GEMINI_CORE : route === 'bedrock-converse' ? CONVERSE_CORE : undefined;
    if (core !== undefined && Array.isArray(ignoreArgs) && ignoreArgs.length === 0) {
      // A tool list kept from an earlier request of this shape, in the same place: skipped by
      // the core, as for the chat family (Gemini's root `tools`, Converse's `toolConfig.tools`).
      const found = findKeptTools(bytes);
      const known = found !== undefined && found.tools.provider === core.code ? found : undefined;
      cv = coreRequestView(bytes, core.code, known?.skip);
      if (cv === undefined) return undefined;
      if (cv !== null && !(cv instanceof Uint32Array)) {
        try {
          const d = moduleCoreDigests(bytes, cv, opts, core, known?.tools);
          if (d !== null) {
            rawPathCounts[route === 'gemini' ? 'gemini' : 'converse']++;
            rawPathCounts[route === 'gemini' ? 'geminiCore' : 'converseCore']++;
            if (lastInPlace) rawPathCounts.inPlace++;
            return d;
          }
        } finally {
          Out.release();
        }
      }
    }
    const ollama = route === 'ollama-chat' && opts.provider === undefined && Array.isArray(ignoreArgs) && ignoreArgs.every((k) => typeof k === 'string');
    // An Ollama conversation's root tool list kept from its earlier request, in the same place:
    // the index skips it and the core's view (or the walk, raw-keys/chat.ts ollamaTools()) takes
    // its kept form.
    const found = ollama && cv === null ? findKeptTools(bytes) : undefined;
    let known = found !== undefined && found.tools.provider === OLLAMA_KEPT ? found : undefined;
    if (ollama) {
      cv = coreRequestView(bytes, OLLAMA_CORE, known?.skip);
      if (cv === undefined) return undefined;
      if (cv !== null && !(cv instanceof Uint32Array)) {
        try {
          const d = ollamaCoreDigests(bytes, cv, ignoreArgs, known?.tools);
          if (d !== null) {
            rawPathCounts.ollama++;
            rawPathCounts.ollamaCore++;
            if (lastInPlace) rawPathCounts.inPlace++;
            return d;
          }
        } finally {
          Out.release();
        }
      }
      // Declined: the index the core made (whole) serves the walk, which then walks the tools.
      if (cv instanceof Uint32Array) known = undefined;
    }
    const tape = cv instanceof Uint32Array ? cv : jsonTape(bytes, known?.skip);
    if (tape === undefined || tape.length === 0) return undefined;
    w = new ChatWalk(bytes, tape);
    for (let i = 0; i < tape.length; i += 8) if ((tape[i]! & F_CHECK_KEYS) !== 0) w.members(i >>> 3);
    const shape = (tape[0]! & 0xff) === T_OBJECT ? route : undefined;
    if (shape === 'ollama-chat' && ollama) {
      // A chat body with Ollama's rules for its calls: the chat walk in its Ollama mode.
      try {
        const d = ollamaDigests(w, ignoreArgs, known);
        rawPathCounts.ollama++;
        return d;
      } catch (e) {
        if (e !== DECLINE) throw e;
      } finally {
        Out.release();
      }
    }
    if (shape === 'gemini' || shape === 'bedrock-converse') {
      try {
        const d = shape === 'gemini' ? geminiDigests(w, opts, opts.ignoreArgs ?? []) : converseDigests(w, opts, opts.ignoreArgs ?? []);
        rawPathCounts[shape === 'gemini' ? 'gemini' : 'converse']++;
        return d;
      } catch (e) {
        if (e !== DECLINE) throw e;
      } finally {
        Out.release();
      }
    }
    const n = normalizeModule(JSON.parse(typeof request === 'string' ? request : decoder.decode(bytes)), opts);
    keyRequest.model = n.view.model;
    return viewDigests(n, JSON.stringify(n.view));
  } catch (e) {
    if (e === DECLINE || e instanceof TapedeckError || e instanceof SyntaxError) return undefined;
    throw e;
  }
}
