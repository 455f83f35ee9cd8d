/**
 * Misses that re-recording cannot fix, and the option that does: a request that differs from its
 * closest recording only in text that changes on every run (today's date as JavaScript prints
 * it, a timestamp or UUID in a tool result), or only in masked credentials (a hosted MCP tool's
 * `authorization`, keyed by its mask: another token, or none in CI, is another mask). Recording
 * again only records the next run's date, or needs the real token; the miss then also names the
 * built-in `volatileText` pattern or the `volatileKeys` member that would make this very
 * recording answer. Named only when it would: both sides are keyed again with it and must give
 * one key. Nothing is matched that was not before: the user still has to set the option.
 *
 * Node only: a page gets ./volatile-advice.browser.ts (package.json "browser"), which keeps the
 * miss as ./volatile-miss.ts makes it, so these words stay out of a bundle with a 100 KB budget
 * (bench/size.mjs).
 */
import { canonicalize } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { normalizeRequest } from '../providers/normalize.ts';
import type { NormalizeOptions } from '../providers/types.ts';
import { VOLATILE_PATTERNS } from '../providers/volatile-text.ts';
import { isBytes } from '../bytes.ts';
import { missHeadline, type MissContext, type MissEntry } from './diagnose.ts';
import { ignoreOption, recordHow } from './miss-fixes.ts';
import { CONTENT_FIELDS } from './volatile-names.ts';
import { withVolatileSpans as spansOf } from './volatile-miss.ts';

const decoder = new TextDecoder();
type PatternName = keyof typeof VOLATILE_PATTERNS;
const NAMES = Object.keys(VOLATILE_PATTERNS) as PatternName[];
// Combinations tried, smallest first: a prompt with a date and a time needs two patterns; more
// than three differing kinds of text is not one volatile span.
const MOST_PATTERNS = 3;
// A whole mask of redaction (store/redact.ts): `[REDACTED]`, or `[REDACTED:<16 hex>]` keyed by value.
const MASK = /^\[REDACTED(?::[0-9a-f]{16})?\]$/;
// Members never offered to volatileKeys: removing `text` or `content` everywhere would key every
// prompt alike. A key pasted into a prompt is masked inside the text, and is content.
const KEPT = new Set([...CONTENT_FIELDS, 'argumentsText', 'parameters', 'thinking', 'messages', 'tools', 'system', 'options', 'model']);

/**
 * The miss as ./volatile-miss.ts makes it (the spans volatileText replaced), plus, when the only
 * difference from the closest recording is text a built-in VOLATILE_PATTERNS entry matches, or
 * masked credentials, the option that makes that recording answer: first in `details.fixes`, in
 * the headline's fix (`details.fix`), and as `details.volatile` (`{ option, names }`). `ctx` is
 * what the miss was explained from (its recordings and entry point).
 *
 * @example
 * throw withVolatileSpans(request, norm, explainMiss(ctx), ctx)
 * // message 0 (system) text differs from the closest recording; if it changes on every run, ignore it with volatileText: [VOLATILE_PATTERNS.dateString]; else re-record: …
 */
export function withVolatileSpans(request: unknown, norm: NormalizeOptions, miss: TapedeckError, ctx?: MissContext): TapedeckError {
  const shown = spansOf(request, norm, miss);
  return ctx === undefined ? shown : volatileAdvice(request, norm, shown, ctx);
}

/**
 * The advice of {@link withVolatileSpans} alone, for a miss whose spans are said elsewhere
 * (ReplayCache adds them to its own miss).
 *
 * @example
 * return volatileAdvice(request, norm, explainMiss(ctx), ctx)
 */
export function volatileAdvice(request: unknown, norm: NormalizeOptions, miss: TapedeckError, ctx: MissContext): TapedeckError {
  if (miss.code !== 'E_MISS') return miss;
  const closest = (miss.details.closest as { index?: unknown }[] | undefined)?.[0]?.index;
  const recorded = typeof closest === 'number' ? ctx.recordings[closest]?.request : undefined;
  if (recorded === undefined) return miss;
  const entry: MissEntry = { ...(ctx.entry ?? { kind: 'matcher' }), recordCommand: ctx.entry?.recordCommand ?? ctx.recordCommand };
  try {
    const sent = parsed(request);
    const rec = parsed(recorded);
    // Alike already (a recording used up, context keys that differ): nothing to leave out.
    if (sameKey(sent, rec, norm)) return miss;
    const advice = textAdvice(sent, rec, norm, entry) ?? maskAdvice(sent, rec, norm, entry);
    return advice ? advised(miss, advice, entry) : miss;
  } catch {
    // A body the advice cannot read: the miss as explained.
    return miss;
  }
}

interface Advice {
  option: 'volatileText' | 'volatileKeys';
  names: string[];
  /** The fix on the headline, before "; else re-record: …". */
  short: string;
  /** The sentence first in details.fixes. */
  long: string;
}

function parsed(body: unknown): unknown {
  return isBytes(body) ? JSON.parse(decoder.decode(body)) : typeof body === 'string' ? JSON.parse(body) : body;
}

/** Whether both bodies are one request under `norm` (their normalized views are equal). */
function sameKey(a: unknown, b: unknown, norm: NormalizeOptions): boolean {
  const view = (x: unknown) => decoder.decode(canonicalize(normalizeRequest(x, norm).view));
  return view(a) === view(b);
}

/** The fewest built-in patterns, in their listed order, that key both alike; undefined if none. */
function patternsFor(sent: unknown, rec: unknown, norm: NormalizeOptions): PatternName[] | undefined {
  const given = norm.volatileText ?? [];
  const sources = new Set(given.map((p) => (p instanceof RegExp ? p.source : String(p))));
  const free = NAMES.filter((n) => !sources.has(VOLATILE_PATTERNS[n].source));
  const keys = (names: readonly PatternName[]) => sameKey(sent, rec, { ...norm, volatileText: [...given, ...names.map((n) => VOLATILE_PATTERNS[n])] });
  // One look with them all first: most misses are real changes, and end here.
  if (!keys(free)) return undefined;
  const pick = (size: number, from: number, chosen: PatternName[]): PatternName[] | undefined => {
    if (chosen.length === size) return keys(chosen) ? chosen : undefined;
    for (let i = from; i < free.length; i++) {
      const found = pick(size, i + 1, [...chosen, free[i]!]);
      if (found) return found;
    }
    return undefined;
  };
  for (let size = 1; size <= Math.min(MOST_PATTERNS, free.length); size++) {
    const found = pick(size, 0, []);
    if (found) return found;
  }
  return undefined;
}

function textAdvice(sent: unknown, rec: unknown, norm: NormalizeOptions, entry: MissEntry): Advice | undefined {
  const names = patternsFor(sent, rec, norm);
  if (!names) return undefined;
  const option = textOption(entry, names, (norm.volatileText ?? []).length > 0);
  const list = names.map((n) => `VOLATILE_PATTERNS.${n}`).join(', ');
  return {
    option: 'volatileText',
    names,
    short: `if it changes on every run, ignore it with ${option}`,
    long:
      `Only text that ${list} match${names.length === 1 ? 'es' : ''} differs (a date, time or id as it is printed on each run): recording again records the next run's, ` +
      `which misses again. If it changes on every run, leave it out of the key with ${option} (docs/matching.md, "Volatile text"); this recording then answers.`,
  };
}

/** The volatileText option in the words of the entry point. */
function textOption(entry: MissEntry, names: readonly PatternName[], has: boolean): string {
  const refs = names.map((n) => `VOLATILE_PATTERNS.${n}`).join(', ');
  if (entry.kind === 'proxy') {
    // `tapedeck serve` takes pattern sources; createHandler and startProxy the option.
    const flags = names.map((n) => `--volatile-text '${VOLATILE_PATTERNS[n].source}'`).join(' ');
    return `${flags} (volatileText: [${refs}] for createHandler or startProxy)`;
  }
  const option = has ? `${refs} added to volatileText` : `volatileText: [${refs}]`;
  if (entry.kind === 'fetch') return has ? `${option} (createFetch)` : `createFetch({ ${option} })`;
  if (entry.kind === 'cache') return `${option} (ReplayCache.open option)`;
  if (entry.kind === 'test') return `${option} (openTestTape or configureTapes option)`;
  if (entry.kind === 'browser') return `${option} (createReplayFetch option)`;
  return option;
}

/**
 * Names of the members whose values differ only in masks (both masked, or one masked and the
 * other empty or absent); undefined when any other value differs.
 */
function maskedMembers(a: unknown, b: unknown, name: string | undefined, out: Set<string>): boolean {
  if (a === b) return true;
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
  if (isObj(a) && isObj(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!maskedMembers(a[k as keyof typeof a], b[k as keyof typeof b], Array.isArray(a) ? name : k, out)) return false;
    return true;
  }
  const mask = (v: unknown) => typeof v === 'string' && MASK.test(v);
  const none = (v: unknown) => v === undefined || v === '';
  if (name === undefined || KEPT.has(name) || !(mask(a) || mask(b)) || !((mask(a) || none(a)) && (mask(b) || none(b)))) return false;
  out.add(name);
  return true;
}

function maskAdvice(sent: unknown, rec: unknown, norm: NormalizeOptions, entry: MissEntry): Advice | undefined {
  const names = new Set<string>();
  const a = normalizeRequest(sent, norm).view;
  const b = normalizeRequest(rec, norm).view;
  if (!maskedMembers(a, b, undefined, names) || names.size === 0) return undefined;
  const list = [...names].sort();
  if (!sameKey(sent, rec, { ...norm, volatileKeys: [...(norm.volatileKeys ?? []), ...list] })) return undefined;
  const option = ignoreOption(entry, { option: 'volatileKeys', names: list });
  // ReplayCache keys the values given to it, never their masks: it has no such miss.
  if (option === undefined) return undefined;
  const quoted = `"${list.join('", "')}"`;
  return {
    option: 'volatileKeys',
    names: list,
    short: `only masked credentials differ (another token, or none): ignore ${list.length === 1 ? 'it' : 'them'} with ${option}`,
    long:
      `Only ${quoted} differs, and its values are masks of credentials (a token is keyed by its mask, so another developer's token, or none in CI, is another request): ` +
      `recording again needs the real token. Leave it out of the key with ${option} (docs/matching.md, "Secrets and the key"); this recording then answers with any token.`,
  };
}

/** The miss with the advice first: its headline's fix, details.fix, details.fixes, details.volatile. */
function advised(miss: TapedeckError, advice: Advice, entry: MissEntry): TapedeckError {
  const difference = String(miss.details.difference ?? '');
  const before = missHeadline(difference, String(miss.details.fix ?? ''));
  const fix = `${advice.short}; else ${recordHow(entry)}`;
  const rest = miss.message.startsWith(before) ? miss.message.slice(before.length) : `\n  ${miss.message}`;
  const fixes = Array.isArray(miss.details.fixes) ? (miss.details.fixes as string[]) : [];
  return new TapedeckError('E_MISS', `${missHeadline(difference, fix)}${rest}`, {
    ...miss.details,
    fix,
    fixes: [advice.long, ...fixes],
    volatile: { option: advice.option, names: advice.names },
  });
}
