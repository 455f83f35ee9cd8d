// Misses that explain themselves: when no recording answers a request, say in one short line
// what differs from the closest recording and how to re-record, in the words of the API the
// user called (createFetch, the proxy, ReplayCache, a test helper, the matcher). The full report
// (closest recordings, excerpts, tools added and removed, recordings already used) stays in the
// error's details. Runs only on the miss path, so it may scan every recording.
//
// The rule for fixes (docs/matching.md, "Misses"): a different prompt, model, tool set, tool
// argument or deciding parameter is a different request, whose recorded answer is wrong for it
// (a question about Germany answered with the recording about France). So a miss never offers a
// looser matching mode. Only a difference confined to a member whose name says it is volatile
// (an id, a timestamp, a nonce), and which the entry point can ignore, gets that precise option.

import { canonicalize } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { SHAPE_ARGS_KEPT, SHAPE_DEFAULTS } from '../providers/normalize.ts';
import type { MatchMode, Recording, RequestDigests, RequestKeys, Signature } from './matcher.ts';
import { canonicalBytes } from './canonical-bytes.ts';
// Browser bundles get miss-fixes.browser.ts (package.json "browser"): a page's only entry point is createReplayFetch.
import { ignoreOption, memberFix, recordHow, repeatOption } from './miss-fixes.ts';
import { CONTENT_FIELDS, isVolatileName, withoutVolatileMember } from './volatile-names.ts';
import { comparable, isInputsView } from './embeddings-compare.ts';
// Browser bundles get member-difference.browser.ts (package.json "browser"): the words alone.
import { closerLook, sharedChars } from './member-difference.ts';
import { visibleExcerpts } from './visible-excerpts.ts';
import { messageRun } from './message-runs.ts';

export { recordHow };

/**
 * The API a miss happened in. Each has its own options and its own way to record, and a miss
 * names only those (a createFetch user has no `tapedeck serve` to restart, a ReplayCache has no
 * `volatileKeys`).
 *
 * - `matcher`: createMatcher used directly (options `ignoreArgs`, `volatileKeys`, `allowRepeats`);
 * - `fetch`: createFetch (option `mode` or `TAPEDECK_MODE`; `ignoreArgs`, `volatileKeys`, `strictOrder`);
 * - `proxy`: `tapedeck serve` / createHandler / startProxy (`--mode`, `--ignore-arg`, `--strict-order`);
 * - `browser`: createReplayFetch, which only replays (tapes are recorded in Node);
 * - `cache`: ReplayCache (option `mode` or `TAPEDECK_MODE`; `ignoredArgs`; no volatile member option);
 * - `test`: the vitest fixture and openTestTape (the exact command that records the test).
 */
export interface MissEntry {
  kind: 'matcher' | 'fetch' | 'proxy' | 'browser' | 'cache' | 'test';
  /** The mode came from an explicit option, which the environment does not override. */
  modeFromOption?: boolean;
  /** The command that records the request, when the entry point knows it. */
  recordCommand?: string;
}

/**
 * What a miss is diagnosed from (explainMiss, closestRecordings): the request's keys, the
 * recordings with their keys, which were used, and where the miss happened.
 */
export interface MissContext {
  mode: MatchMode;
  request: RequestKeys;
  recordings: readonly Recording[];
  /** Digests of every recording (ranking needs only these). */
  keys: readonly RequestDigests[];
  /** Full keys of recording i, with its normalized view (for the excerpts of the closest). */
  full(i: number): RequestKeys;
  /**
   * The request as it was given (parsed JSON, or its text or bytes), when there is one: ranks
   * recordings tied on everything their digests tell apart by the text they share with it.
   */
  requestBody?: unknown;
  /**
   * Recording i's request as canonical JSON, kept between misses (RequestTexts); a view to be
   * read before the next call. Absent: made on each miss.
   */
  requestText?(i: number): Uint8Array | undefined;
  used: Uint8Array;
  allowRepeats: boolean;
  source?: string;
  recordCommand?: string;
  /** Where the miss happened (default `{ kind: 'matcher' }`): decides which fixes are named. */
  entry?: MissEntry;
  hasKey(key: string): boolean;
  hasSignature(digest: string): boolean;
}

/** One of the closest recordings, as reported in E_MISS details. */
export interface NearMiss {
  index: number;
  source?: string;
  /** Leading messages the recording shares with the request (equal path hashes). */
  sharedMessages: number;
  /** First message index where the two differ (or where one of them ends). */
  divergesAt: number;
  signatureDistance: number;
  toolsAdded: string[];
  toolsRemoved: string[];
  messageCount: number;
  contextKeys: string[];
  used: boolean;
  /** Canonical JSON excerpts of both sides at divergesAt ('' where that side has no message). */
  requestExcerpt: string;
  recordingExcerpt: string;
  /** Top-level request arguments whose values differ (besides messages). */
  differingArgs: string[];
  /** The member name at the first difference inside the diverging message, if it is one leaf. */
  differingField?: string;
}

/** What kind of difference a miss headline names (stable: tests and tools may branch on it). */
export type MissKind =
  | 'no-recordings'
  | 'used-up'
  | 'model'
  | 'tools'
  | 'system'
  | 'message'
  | 'extra-message'
  | 'fewer-messages'
  | 'arguments'
  | 'volatile-member'
  | 'volatile-argument'
  | 'other';

/** The first difference between a request and its closest recording, worded for a headline. */
export interface MissDifference {
  kind: MissKind;
  /** One phrase, e.g. `message 1 (user) text differs from the closest recording`. */
  text: string;
  /** Short lines that show the difference (request and recording excerpts), may be empty. */
  lines: string[];
  /** Set only when the one difference is a volatile-looking member the user may ignore. */
  volatile?: { option: 'volatileKeys' | 'ignoreArgs'; names: string[] };
}

const decoder = new TextDecoder();
const canonicalText = (v: unknown) => decoder.decode(canonicalize(v));

function setDiff(a: readonly string[], b: readonly string[]): string[] {
  const s = new Set(b);
  return a.filter((x) => !s.has(x));
}

function signatureDistance(a: Signature, b: Signature): number {
  return (
    setDiff(a.toolNames, b.toolNames).length +
    setDiff(b.toolNames, a.toolNames).length +
    Math.abs(a.messageCount - b.messageCount) +
    setDiff(a.contextKeys, b.contextKeys).length +
    setDiff(b.contextKeys, a.contextKeys).length
  );
}

/** How many leading items (path hashes, characters, bytes) a and b have in common. */
function sharedPrefix<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Items a and b have in common at their start, plus those at their end after it (an edited text keeps both ends). */
function sharedEnds<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const p = sharedPrefix(a, b);
  const n = Math.min(a.length, b.length) - p;
  let s = 0;
  while (s < n && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return p + s;
}

/** Excerpts of two texts around their first difference, so long prompts show what changed. */
function excerpts(a: string, b: string, width = 110): [string, string] {
  const from = Math.max(0, sharedPrefix(a, b) - 40);
  const cut = (s: string) => (from > 0 ? '…' : '') + s.slice(from, from + width) + (s.length > from + width ? '…' : '');
  return visibleExcerpts(a ? cut(a) : '(no message)', b ? cut(b) : '(no message)');
}

/** Path of the first differing leaf between two JSON values, e.g. ['content', 0, 'text']. */
function firstDifference(a: unknown, b: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (a === b) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], [...path, i]);
      if (d) return d;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], [...path, k]);
      if (d) return d;
    }
    return undefined;
  }
  return canonicalText(a ?? null) === canonicalText(b ?? null) ? undefined : path;
}

function at(v: unknown, path: readonly (string | number)[]): unknown {
  let x = v;
  for (const p of path) x = x !== null && typeof x === 'object' ? (x as Record<string | number, unknown>)[p] : undefined;
  return x;
}

const opts = (v: Record<string, unknown>) => (v.options && typeof v.options === 'object' ? (v.options as Record<string, unknown>) : {});
const differs = (a: Record<string, unknown>, b: Record<string, unknown>, k: string) => canonicalText(a[k] ?? null) !== canonicalText(b[k] ?? null);

/** Top-level arguments that differ: model, system and tools first, then the options by name. */
function differingArgsOf(req: Record<string, unknown>, rec: Record<string, unknown>): string[] {
  return [
    ...['model', 'system', 'tools'].filter((k) => differs(req, rec, k)),
    ...[...new Set([...Object.keys(opts(req)), ...Object.keys(opts(rec))])].sort().filter((k) => differs(opts(req), opts(rec), k)),
  ];
}

function nearMiss(ctx: MissContext, i: number): NearMiss {
  const [req, rec] = comparable(ctx.request, ctx.full(i));
  const shared = sharedPrefix(req.pathHashes, rec.pathHashes);
  const reqMsg = req.messages[shared];
  const recMsg = rec.messages[shared];
  const [requestExcerpt, recordingExcerpt] = excerpts(
    reqMsg === undefined ? '' : canonicalText(reqMsg),
    recMsg === undefined ? '' : canonicalText(recMsg),
  );
  let differingField: string | undefined;
  if (reqMsg !== undefined && recMsg !== undefined) {
    const path = firstDifference(reqMsg, recMsg);
    const leaf = path?.filter((p): p is string => typeof p === 'string').pop();
    if (leaf && !CONTENT_FIELDS.has(leaf)) differingField = leaf;
  }
  return {
    index: i,
    source: ctx.recordings[i]!.source,
    sharedMessages: shared,
    divergesAt: shared,
    signatureDistance: signatureDistance(req.signature, rec.signature),
    toolsAdded: setDiff(req.signature.toolNames, rec.signature.toolNames),
    toolsRemoved: setDiff(rec.signature.toolNames, req.signature.toolNames),
    messageCount: rec.signature.messageCount,
    contextKeys: rec.signature.contextKeys,
    used: ctx.used[i] === 1,
    requestExcerpt,
    recordingExcerpt,
    differingArgs: differingArgsOf(req.view, rec.view),
    differingField,
  };
}

// Arguments that decide the shape of the answer (a stream or one body, how many choices, which
// format): a recording that differs in one of them answers in another shape, so among recordings
// that share as much content it is the farther one. Absent means the default.
const SHAPE_FLAGS: Readonly<Record<string, unknown>> = { ...Object.fromEntries(SHAPE_ARGS_KEPT.map((k) => [k, null])), ...SHAPE_DEFAULTS };

/** How many shape-deciding arguments differ, absent counting as the default. */
function shapeDistance(req: Record<string, unknown>, rec: Record<string, unknown>): number {
  const a = opts(req);
  const b = opts(rec);
  let n = 0;
  for (const [k, dflt] of Object.entries(SHAPE_FLAGS)) {
    if (canonicalText(a[k] ?? dflt) !== canonicalText(b[k] ?? dflt)) n++;
  }
  return n;
}

// Words of canonical JSON: the unit in which "how much of the text is shared" is counted, so one
// letter in common by chance does not outweigh a difference of shape.
const WORD = /[^\s"{}[\],:]+/g;

/**
 * How much of the conversation after the shared prefix the two have in common: leading plus
 * trailing words of the remaining messages (a prompt edited in one place keeps both ends), then
 * of their characters.
 */
function sharedWords(a: readonly unknown[], b: readonly unknown[], from: number): number {
  const words = (ms: readonly unknown[]) => ms.slice(from).map((m) => canonicalText(m ?? null)).join(' ').match(WORD) ?? [];
  // Characters break ties of words: a last word edited ("text" to "text!") shares as many
  // words with a shorter prompt ("Summarize this").
  return sharedEnds(words(a), words(b)) + sharedChars(a, b, from);
}

// Recordings whose full view is compared (the ones sharing the most leading messages): bounds
// the miss path on a tape of thousands.
const REFINE_MAX = 256;

/**
 * Puts the recordings tied with the last one the refinement takes (as many leading messages, the
 * same signature distance) in the order of the text they share with the request. Cut in tape
 * order, a tape where hundreds share the request's leading messages (one system prompt, every
 * test's first turn) left the recording of the nearest prompt out whenever it came later. The
 * measure is cheap because every tied recording pays it: the bytes at the start and end of the
 * two bodies' canonical JSON that are the same (an edited prompt keeps both ends).
 */
function rankTied(coarse: { i: number; shared: number; dist: number }[], budget: number, ctx: MissContext): void {
  const cut = coarse[budget - 1]!;
  const tied = coarse.filter((c) => c.shared === cut.shared && c.dist === cut.dist);
  const from = coarse.indexOf(tied[0]!);
  if (from + tied.length === budget) return;
  const text = canonicalBytes(ctx.requestBody);
  if (text === undefined) return;
  // Each recording's text from the matcher's store where it keeps one (made at its first miss,
  // kept for the next), else made now.
  const score = tied.map((c) => bytesShared(text, ctx.requestText ? ctx.requestText(c.i) : canonicalBytes(ctx.recordings[c.i]?.request)));
  tied
    .map((_, k) => k)
    .sort((x, y) => score[y]! - score[x]! || tied[x]!.i - tied[y]!.i)
    .forEach((k, n) => (coarse[from + n] = tied[k]!));
}

/**
 * sharedEnds() of two byte strings, in a function of its own: called only with bytes, its
 * element reads stay monomorphic (~0.4 us for a 200-byte body, against ~4 us in the function
 * shared with word lists and strings).
 */
function bytesShared(x: Uint8Array, y: Uint8Array | undefined): number {
  if (y === undefined) return -1;
  const n = Math.min(x.length, y.length);
  let p = 0;
  while (p < n && x[p] === y[p]) p++;
  let s = 0;
  while (s < n - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
  return p + s;
}

/**
 * The recordings closest to the request, ranked by how much of the request they share: leading
 * messages first, then the words of the rest of the conversation, then the arguments that decide
 * the answer's shape (stream, n, format), the tools, the model, the other arguments, and the
 * signature. A changed streamed prompt is thus compared with the streamed recording of the
 * nearest prompt, not with an unrelated plain one recorded earlier.
 */
export function closestRecordings(ctx: MissContext, limit = 3): NearMiss[] {
  const req = ctx.request;
  const coarse = ctx.keys.map((k, i) => ({ i, shared: sharedPrefix(req.pathHashes, k.pathHashes), dist: signatureDistance(req.signature, k.signature) }));
  coarse.sort((a, b) => b.shared - a.shared || a.dist - b.dist || a.i - b.i);
  const budget = Math.max(limit, REFINE_MAX);
  if (coarse.length > budget && ctx.requestBody !== undefined) rankTied(coarse, budget, ctx);
  const candidates = coarse.slice(0, budget);
  const scored = candidates.map((c) => {
    const rec = ctx.full(c.i);
    const toolsDiff = setDiff(req.signature.toolNames, rec.signature.toolNames).length + setDiff(rec.signature.toolNames, req.signature.toolNames).length + (differs(req.view, rec.view, 'tools') ? 1 : 0);
    const args = differingArgsOf(req.view, rec.view);
    return {
      ...c,
      words: sharedWords(req.messages, rec.messages, c.shared),
      shape: shapeDistance(req.view, rec.view),
      tools: toolsDiff,
      model: differs(req.view, rec.view, 'model') ? 1 : 0,
      args: args.length,
    };
  });
  scored.sort((a, b) => b.shared - a.shared || b.words - a.words || a.shape - b.shape || a.tools - b.tools || a.model - b.model || a.args - b.args || a.dist - b.dist || a.i - b.i);
  return scored.slice(0, limit).map((s) => nearMiss(ctx, s.i));
}

const list = (xs: readonly string[]) => `[${xs.join(', ')}]`;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** A value for a headline: short canonical JSON (strings unquoted), or nothing when too long. */
const shortValue = (v: unknown): string | undefined => {
  if (v === undefined) return '(absent)';
  const t = typeof v === 'string' ? v : canonicalText(v);
  return t.length <= 32 ? t : undefined;
};
/** Items joined by spaces up to about `width` characters, then how many were left out. */
function fewOf(items: readonly string[], width: number): string {
  let out = '';
  let k = 0;
  while (k < items.length && (k === 0 || out.length + 1 + items[k]!.length <= width)) out += (k ? ' ' : '') + clip(items[k++]!, width);
  return k < items.length ? `${out} (and ${items.length - k} more)` : out;
}
const roleOf = (m: unknown) => {
  const r = m !== null && typeof m === 'object' ? (m as { role?: unknown }).role : undefined;
  return typeof r === 'string' ? r : 'message';
};

/** Two lines that show a difference: the request's side and the recording's, cut around it. */
function excerptLines(a: unknown, b: unknown): string[] {
  const text = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : canonicalText(v));
  // A member one side lacks is absent there, not the whole message (both messages exist here).
  if (a === undefined || b === undefined) {
    const side = (v: unknown) => (v === undefined ? '(absent)' : clip(text(v), 100));
    return [`  request:   ${side(a)}`, `  recording: ${side(b)}`];
  }
  const [x, y] = excerpts(text(a), text(b), 100);
  return [`  request:   ${x}`, `  recording: ${y}`];
}

/** What differs inside one message, worded: text, tool call arguments, a tool result, a member. */
function messageDifference(i: number, reqMsg: unknown, recMsg: unknown): MissDifference {
  const role = roleOf(reqMsg);
  const where = `message ${i} (${role})`;
  const path = firstDifference(reqMsg, recMsg) ?? [];
  const names = path.filter((p): p is string => typeof p === 'string');
  const leaf = names[names.length - 1];
  const lines = excerptLines(at(reqMsg, path), at(recMsg, path));
  // Roles first: the first difference in canonical order is often the content (it sorts before
  // `role`), and "text differs" between a user message and a system one misleads.
  if (path[0] === 'role' || role !== roleOf(recMsg)) return { kind: 'message', text: `${where} role differs: ${role} vs ${roleOf(recMsg)} in the closest recording`, lines: [] };
  // The part the difference is in (content[k]) tells a tool call from a tool result from text.
  const part = path[0] === 'content' && typeof path[1] === 'number' ? at(reqMsg, path.slice(0, 2)) ?? at(recMsg, path.slice(0, 2)) : undefined;
  const partType = part !== null && typeof part === 'object' ? (part as { type?: unknown }).type : undefined;
  if (partType === 'tool_call' && names.includes('arguments')) {
    return { kind: 'message', text: `${where} tool call arguments differ from the closest recording`, lines };
  }
  if (partType === 'tool_call' && leaf === 'name') return { kind: 'message', text: `${where} tool call name differs from the closest recording`, lines };
  if (partType === 'tool_result') return { kind: 'message', text: `${where} tool result differs from the closest recording`, lines };
  if (leaf === 'text' || (path.length === 2 && partType === 'text')) return { kind: 'message', text: `${where} text differs from the closest recording`, lines };
  // An attachment: its URL, bytes or file differ, whichever member of the view holds them.
  if ((partType === 'image' || partType === 'file' || partType === 'audio') && path[2] === partType) return { kind: 'message', text: `${where} ${partType} differs from the closest recording`, lines };
  if (leaf !== undefined && !CONTENT_FIELDS.has(leaf)) {
    return { kind: 'message', text: `${where} member "${clip(leaf, 40)}" differs from the closest recording`, lines };
  }
  return { kind: 'message', text: `${where} content differs from the closest recording`, lines };
}

/** Provider names for a shape difference. */
const SHAPE_NAMES: Readonly<Record<string, string>> = { 'openai-embeddings': 'embeddings', 'openai-responses': 'Responses', 'openai-chat': 'chat completions' };
const shapeName = (p: unknown): string => (typeof p === 'string' && Object.hasOwn(SHAPE_NAMES, p) ? SHAPE_NAMES[p]! : String(p));

/**
 * The differences between a request and its closest recording, most telling first: the model,
 * the tools, the messages, then the other arguments. Each is a change of content unless it is a
 * volatile-looking member and nothing else differs (checked by removing it from both sides).
 * Also what the drift report says changed in a request that was re-recorded.
 *
 * An embeddings request and a recording read as another shape (or the other way round) are
 * compared as embeddings when the other's view is what the same `input` gives (see
 * asEmbeddings()); when nothing else differs, or they cannot be compared, the difference named
 * is the shape each was read as, with what makes a body an embeddings one.
 *
 * @example
 * differencesOf(requestKeys(newBody), requestKeys(oldBody)).map((d) => d.text)
 * // ['message 1 (user) text differs from the closest recording']
 */
export function differencesOf(request: RequestKeys, recording: RequestKeys): MissDifference[] {
  const crossed = isInputsView(request.view) !== isInputsView(recording.view);
  if (!crossed) return viewDifferences(request, recording);
  const [req, rec, converted] = comparable(request, recording);
  const shape: MissDifference = {
    kind: 'other',
    text: `request read as ${shapeName(request.provider)}, the closest recording as ${shapeName(recording.provider)}`,
    lines: [
      '  a body is an embeddings call with encoding_format, dimensions or options, a list of strings or tokens as input, or a model name with "embed"',
    ],
  };
  if (!converted) {
    // Messages against inputs: no member-by-member comparison means anything. The model still does.
    const model = viewDifferences(request, recording).filter((d) => d.kind === 'model');
    return [shape, ...model];
  }
  const out = viewDifferences(req, rec);
  return out.length > 0 ? out : [shape];
}

function viewDifferences(req: RequestKeys, rec: RequestKeys): MissDifference[] {
  const out: MissDifference[] = [];
  const rv = req.view;
  const cv = rec.view;
  if (differs(rv, cv, 'model')) {
    const a = shortValue(rv.model);
    const b = shortValue(cv.model);
    out.push({ kind: 'model', text: a && b ? `model differs: ${a} vs ${b} in the closest recording` : 'model differs from the closest recording', lines: a && b ? [] : excerptLines(rv.model, cv.model) });
  }
  const added = setDiff(req.signature.toolNames, rec.signature.toolNames);
  const removed = setDiff(rec.signature.toolNames, req.signature.toolNames);
  if (added.length || removed.length) {
    out.push({ kind: 'tools', text: `tools differ from the closest recording: ${fewOf([...added.map((t) => `+${t}`), ...removed.map((t) => `-${t}`)], 80)}`, lines: [] });
  } else if (differs(rv, cv, 'tools')) {
    const tools = (v: unknown) => (Array.isArray(v) ? v : []) as { name?: unknown }[];
    const rt = tools(cv.tools);
    const changed = tools(rv.tools).find((t, k) => canonicalText(t) !== canonicalText(rt[k] ?? null));
    const name = typeof changed?.name === 'string' ? ` of ${clip(changed.name, 40)}` : '';
    out.push({ kind: 'tools', text: `tool definition${name} differs from the closest recording`, lines: [] });
  }
  if (differs(rv, cv, 'system')) out.push({ kind: 'system', text: 'system prompt differs from the closest recording', lines: excerptLines(rv.system, cv.system) });
  const d = sharedPrefix(req.pathHashes, rec.pathHashes);
  const n = req.messages.length;
  const m = rec.messages.length;
  // A message taken out (a system prompt removed) or put in shifts the rest by one: said as
  // that, not as message d differing from a message it was never meant to match.
  const same = (a: unknown, b: unknown) => a !== undefined && b !== undefined && canonicalText(a) === canonicalText(b);
  const prompt = (x: unknown) => d === 0 && /^(system|developer)$/.test(roleOf(x));
  // Two to four messages put in or taken out together (./message-runs.ts; a page's miss names the first that differs).
  const run = d < n && d < m ? messageRun(req.messages, rec.messages, d, same, roleOf, (v) => excerpts(canonicalText(v), '', 100)[0]) : undefined;
  if (run) out.push(run);
  else if (d < n && d < m && same(req.messages[d], rec.messages[d + 1]) && same(req.messages[d + 1], rec.messages[d])) {
    // Two neighbours swapped: each is the other's, neither new nor missing.
    out.push({ kind: 'message', text: `messages ${d} and ${d + 1} (${roleOf(req.messages[d])}) are swapped: the closest recording has them in the other order`, lines: [] });
  } else if (d < n && d < m && same(req.messages[d], rec.messages[d + 1]) && !same(req.messages[d + 1], rec.messages[d])) {
    const gone = rec.messages[d];
    out.push({
      kind: 'message',
      text: prompt(gone) ? `the system prompt (message 0 of the closest recording) is missing from the request` : `message ${d} of the closest recording (${roleOf(gone)}) is missing from the request`,
      lines: [`  recording: ${excerpts(canonicalText(gone), '', 100)[0]}`],
    });
  } else if (d < n && d < m && same(req.messages[d + 1], rec.messages[d])) {
    const put = req.messages[d];
    out.push({
      kind: 'message',
      text: prompt(put) ? `message 0 (${roleOf(put)}) is new: the closest recording has no system prompt` : `message ${d} (${roleOf(put)}) is new: the closest recording goes on without it`,
      lines: [`  request:   ${excerpts(canonicalText(put), '', 100)[0]}`],
    });
  } else if (d < n && d < m) out.push(messageDifference(d, req.messages[d], rec.messages[d]));
  else if (d < n) {
    out.push({
      kind: 'extra-message',
      text: `message ${d} (${roleOf(req.messages[d])}) is new: the closest recording has ${m} message${m === 1 ? '' : 's'}`,
      lines: [`  request:   ${excerpts(canonicalText(req.messages[d]), '', 100)[0]}`],
    });
  } else if (d < m) {
    out.push({ kind: 'fewer-messages', text: `the request has ${n} message${n === 1 ? '' : 's'}, the closest recording ${m}`, lines: [] });
  }
  const args = differingArgsOf(rv, cv).filter((k) => k !== 'model' && k !== 'system' && k !== 'tools');
  if (args.length) {
    const one = args.length === 1 ? args[0]! : undefined;
    // Temperature is keyed only at 0: its absence from a view is a sampling one (or none). A
    // `stream` absent from a view is a call not streamed (`stream: false` is keyed as absent,
    // and Ollama's default stream is keyed as `true`), so the caller who sent false reads false.
    const value = (v: unknown) => (v === undefined && one === 'temperature' ? 'sampling (not 0)' : v === undefined && one === 'stream' ? 'false' : shortValue(v));
    const a = one === undefined ? undefined : value(opts(rv)[one]);
    const b = one === undefined ? undefined : value(opts(cv)[one]);
    const text = one !== undefined && a && b ? `argument ${clip(one, 40)} differs: ${a} vs ${b} in the closest recording` : `arguments differ from the closest recording: ${fewOf(args, 80)}`;
    out.push({ kind: 'arguments', text, lines: [] });
  }
  // Context values are not in the key, but which context keys exist is in the signature.
  const ctxAdded = setDiff(req.signature.contextKeys, rec.signature.contextKeys);
  const ctxRemoved = setDiff(rec.signature.contextKeys, req.signature.contextKeys);
  if (ctxAdded.length || ctxRemoved.length) {
    out.push({ kind: 'other', text: `context keys differ from the closest recording: ${fewOf([...ctxAdded.map((k) => `+${k}`), ...ctxRemoved.map((k) => `-${k}`)], 80)}`, lines: [] });
  }
  // What each difference is inside: the member of an option or tool, the call of a result.
  closerLook(out, req, rec, d);
  if (out.length === 1) {
    // A single difference in volatile-looking names only, which removing makes vanish: the one
    // case where ignoring something is the fix rather than re-recording. Removed only where the
    // member is not content (withoutVolatileMember): a `date` in a tool call's arguments, a
    // `fileId` of an attachment or the `id` linking a result to its call would otherwise vanish
    // too, and the option named would serve the recording of another request.
    const only = out[0]!;
    if (only.kind === 'message') {
      const leaf = firstDifference(req.messages[d], rec.messages[d])?.filter((p): p is string => typeof p === 'string').pop();
      if (leaf && isVolatileName(leaf)) {
        const strip = (v: Record<string, unknown>) => canonicalText(withoutVolatileMember(v, leaf));
        if (strip(rv) === strip(cv)) {
          out[0] = { ...only, kind: 'volatile-member', volatile: { option: 'volatileKeys', names: [leaf] } };
        }
      }
    } else if (only.kind === 'arguments' && args.every((a) => isVolatileName(a, true))) {
      out[0] = { ...only, kind: 'volatile-argument', volatile: { option: 'ignoreArgs', names: args } };
    }
  }
  // An embeddings request's "messages" are its inputs, which have no role: said as inputs.
  return /embed/.test(String(req.provider)) ? out.map((x) => ({ ...x, text: asInputs(x.text) })) : out;
}

/** A difference's words for an embeddings request: `input 1` for `message 1 (message)`. */
const asInputs = (text: string): string =>
  text
    .replace(/\bmessages? (\d+)(?: and (\d+))? \(message\)/g, (_m, a: string, b?: string) => (b === undefined ? `input ${a}` : `inputs ${a} and ${b}`))
    .replace(/\bmessage (\d+) of the closest recording \(message\)/g, 'input $1 of the closest recording')
    .replace(/\b(\d+) messages?\b/g, (_m, n: string) => `${n} input${n === '1' ? '' : 's'}`);

/**
 * The fix for a request called more often than it was recorded, where each recording replays
 * once (strictOrder): record again, or let the last recording answer again.
 *
 * @example
 * usedUpFix({ kind: 'fetch' }) // "re-record: createFetch({ mode: 'record' }), or drop strictOrder: true"
 */
export function usedUpFix(entry: MissEntry): string {
  return fixFor(entry, { kind: 'used-up', text: '', lines: [] }, false);
}

/**
 * Longest first line of a miss; longer ones put the fix on the next line. 140 leaves room for
 * what an SDK puts in front (`400 tapedeck miss: `) within 160 characters.
 */
export const HEADLINE_MAX = 140;

/**
 * The first line(s) of a miss: what differs, then how to fix it, on one line when that fits in
 * {@link HEADLINE_MAX} characters, else on two (the fix then starts with a capital).
 *
 * @example
 * missHeadline('model differs: gpt-4o vs gpt-4o-mini in the closest recording', 're-record: TAPEDECK_MODE=record')
 * // 'model differs: gpt-4o vs gpt-4o-mini in the closest recording; re-record: TAPEDECK_MODE=record'
 */
export function missHeadline(difference: string, fix: string): string {
  const what = clip(difference, HEADLINE_MAX);
  const one = `${what}; ${fix}`;
  return one.length <= HEADLINE_MAX ? one : `${what}\n${fix.charAt(0).toUpperCase()}${fix.slice(1)}`;
}

/**
 * The fix for a difference at an entry point: the ignore option when the difference is volatile
 * and the entry point has one, else how to re-record.
 */
function fixFor(entry: MissEntry, diff: MissDifference | undefined, allowRepeats: boolean): string {
  const how = recordHow(entry);
  // Same request, called more often than recorded: replaying the last answer again is not a
  // looser match, so the option that allows it may be named.
  const rep = diff?.kind === 'used-up' && !allowRepeats ? repeatOption(entry) : undefined;
  if (rep) return `${how}, or ${rep}`;
  const ignore = diff?.volatile ? ignoreOption(entry, diff.volatile) : undefined;
  return ignore ? `if it is volatile, ignore it with ${ignore}; else ${how}` : how;
}

/**
 * Builds the E_MISS error for a request no recording answers. `message` is the short headline
 * (what differs from the closest recording and how to fix it, for the entry point in
 * `ctx.entry`) plus at most two excerpt lines; `details` holds the rest: `difference`, `kind`,
 * `fix`, `fixes`, `closest`, `used` and `report`, the full multi-line diagnosis.
 *
 * @example
 * try { matcher.match(request) } catch (e) {
 *   if (e instanceof TapedeckError && e.code === 'E_MISS') console.log(e.message, e.details.report)
 * }
 */
export function explainMiss(ctx: MissContext): TapedeckError {
  const given = ctx.entry ?? { kind: 'matcher' };
  const entry: MissEntry = { ...given, recordCommand: given.recordCommand ?? ctx.recordCommand };
  const req = ctx.request;
  const total = ctx.recordings.length;
  const usedIdx: number[] = [];
  ctx.used.forEach((u, i) => u && usedIdx.push(i));
  const near = closestRecordings(ctx);
  const best = near[0];
  const sameKey = ctx.keys.filter((k) => k.key === req.key).length;
  // Used up only if every recording of the key is used: in signature mode an unused one with
  // the same key (context keys are not in the key) still misses, for its signature.
  const usedUp = sameKey > 0 && ctx.keys.every((k, i) => k.key !== req.key || ctx.used[i] === 1);

  let diffs: MissDifference[] = [];
  if (total === 0) diffs = [{ kind: 'no-recordings', text: 'there are no recordings', lines: [] }];
  else if (usedUp) {
    // "Already used", not "called once more than recorded": in hybrid and sequential modes another
    // request may have taken the recording.
    diffs = [{ kind: 'used-up', text: sameKey === 1 ? 'the one recording of this request is already used' : `the ${sameKey} recordings of this request are already used`, lines: [] }];
  } else if (best) {
    diffs = differencesOf(req, ctx.full(best.index));
    if (diffs.length === 0) diffs = [{ kind: 'other', text: 'the request differs from the closest recording only in parts the key leaves out', lines: [] }];
  }
  const first = diffs[0]!;
  const more = diffs.length - 1;
  const difference = `${first.text}${more > 0 ? ` (and ${more} more difference${more === 1 ? '' : 's'})` : ''}`;
  const fix = fixFor(entry, first, ctx.allowRepeats);

  const fixes: string[] = [];
  if (first.kind === 'used-up') {
    const rep = repeatOption(entry);
    fixes.push(`The code now makes this call more often than when it was recorded: ${recordHow(entry)}${rep && !ctx.allowRepeats ? `, or ${rep} to replay the last recording again` : ''}.`);
  } else {
    const ignore = first.volatile ? ignoreOption(entry, first.volatile) : undefined;
    const member = ignore || !first.volatile ? undefined : memberFix(entry, first.volatile.names);
    if (ignore) fixes.push(`Only "${first.volatile!.names.join('", "')}" differs, and its name says it changes on every call: ignore it with ${ignore}.`);
    else if (member) fixes.push(member);
    fixes.push(`The request changed since it was recorded, and a recording of another request would be a wrong answer: ${recordHow(entry)}${ctx.source ? ` (recordings in ${ctx.source})` : ''}.`);
  }

  const lines: string[] = [
    `No recording matches this request (mode ${ctx.mode}; ${total} recording${total === 1 ? '' : 's'}${ctx.source ? ` from ${ctx.source}` : ''}, ${total - usedIdx.length} unused).`,
    `Request: key ${req.key.slice(0, 16)}…, ${req.signature.messageCount} message${req.signature.messageCount === 1 ? '' : 's'}, ` +
      `tools ${list(req.signature.toolNames)}, context keys ${list(req.signature.contextKeys)}, signature ${req.signatureDigest.slice(0, 16)}….`,
  ];
  if (ctx.mode === 'signature' || ctx.mode === 'hybrid') {
    // Said because the signature alone would have matched them: a reader of a signature-mode
    // miss otherwise sees recordings of its signature and no reason they were passed over.
    const otherShape = ctx.keys.filter((k) => k.signatureDigest === req.signatureDigest && k.shape !== req.shape).length;
    if (otherShape > 0) {
      lines.push(
        `${otherShape} recording${otherShape === 1 ? ' has' : 's have'} this signature but answer${otherShape === 1 ? 's' : ''} in another shape than this request's (${req.shape || 'a plain answer'}): ` +
          'no fallback serves one, the client could not read it.',
      );
    }
  }
  if (diffs.length) lines.push('Differences from the closest recording:', ...diffs.map((x) => `  - ${x.text}`));
  if (near.length) {
    lines.push('Closest recordings:');
    const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
    for (const n of near) {
      const name = `#${n.index}${n.source ? ` (${n.source})` : ''}${n.used ? ' [already used]' : ''}`;
      const sameMessages = n.sharedMessages === n.messageCount && n.sharedMessages === req.signature.messageCount;
      lines.push(
        `  ${name}: ` +
          (sameMessages
            ? `the same ${plural(n.messageCount, 'message')}`
            : `shares ${plural(n.sharedMessages, 'leading message')}, diverges at message ${n.divergesAt}; ${plural(n.messageCount, 'message')}`) +
          `, context keys ${list(n.contextKeys)}`,
      );
      if (n.toolsAdded.length || n.toolsRemoved.length) {
        lines.push(`      tools: added ${list(n.toolsAdded)}, removed ${list(n.toolsRemoved)}`);
      }
      if (!sameMessages) {
        lines.push(`      request   [${n.divergesAt}] ${n.requestExcerpt}`);
        lines.push(`      recording [${n.divergesAt}] ${n.recordingExcerpt}`);
      }
      if (n.differingArgs.length) lines.push(`      differing request arguments: ${list(n.differingArgs)}`);
    }
  } else {
    lines.push('There are no recordings at all.');
  }
  lines.push(`Already used: ${usedIdx.length ? list(usedIdx.slice(0, 20).map((i) => `#${i}`)) + (usedIdx.length > 20 ? ` and ${usedIdx.length - 20} more` : '') : 'none'}.`);
  lines.push('How to fix:', ...fixes.map((f) => `  - ${f}`));

  return new TapedeckError('E_MISS', [missHeadline(difference, fix), ...first.lines].join('\n'), {
    key: req.key,
    signature: req.signature,
    signatureDigest: req.signatureDigest,
    difference,
    kind: first.kind,
    fix,
    closest: near,
    used: usedIdx,
    fixes,
    report: lines.join('\n'),
  });
}
