/**
 * Volatile text: parts of a prompt that change from run to run without changing what is asked
 * (today's date, a request UUID, a timestamp in a system prompt). Each match of a `volatileText`
 * pattern in the text of a message is replaced by VOLATILE_MARK before the request is keyed, so
 * a recording made yesterday still answers today. docs/matching.md, "Volatile text".
 *
 * Only text parts of messages change (the system prompt included, and text inside tool
 * results); tools, model and options are keyed as they are.
 */
import { TapedeckError } from '../errors.ts';

/** What each match becomes in the keyed view. */
export const VOLATILE_MARK = '<volatile>';

/**
 * Patterns for what most often splits recordings. Use them as they are or as a start:
 *
 * @example
 * createFetch({ tape, volatileText: [VOLATILE_PATTERNS.isoTimestamp, VOLATILE_PATTERNS.date, VOLATILE_PATTERNS.uuid] })
 * // "Today is " + new Date().toDateString() + " (" + new Date().toLocaleDateString() + ")"
 * createFetch({ tape, volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] })
 */
export const VOLATILE_PATTERNS = /* @__PURE__ */ Object.freeze({
  // Pure (above): the page bundle names no pattern, so it carries none of them.
  /** 2026-11-25T21:48:59Z, 2026-11-25T21:48:59.123+01:00, 2026-11-25 21:48 */
  isoTimestamp: /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g,
  /** 2026-11-25 (also the date of a timestamp: list isoTimestamp first to replace it whole) */
  date: /\b\d{4}-\d{2}-\d{2}(?!\d)/g,
  /** 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13 (any version, either case) */
  uuid: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /** Unix times in seconds or milliseconds (10 or 13 digits) */
  unixTime: /\b\d{10}(?:\d{3})?\b/g,
  /**
   * A JavaScript Date as its toDateString(), toString() and toUTCString() print it: Tue Dec 08
   * 2026, Tue Dec 08 2026 15:56:18 GMT+0100 (Central European Standard Time), Tue, 08 Dec 2026
   * 15:56:18 GMT. The weekday, month and year must all be there: "Mon Dec 08" is left alone.
   */
  dateString:
    /\b(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat)(?:, \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} )\d{4}(?!\d)(?: \d{2}:\d{2}:\d{2} GMT(?:[+-]\d{4}(?: \([^()]*\))?)?)?/g,
  /**
   * A date as toLocaleDateString() prints it in numbers: 12/8/2026 (en-US), 08/12/2026 (en-GB,
   * fr), 8.12.2026 (de), 8. 12. 2026 (cs), 8-12-2026 (nl), 2026/12/8 (ja, zh), 2026. 12. 8. (ko).
   * Years 1900-2099 only, and one separator throughout, so a version (1.2.3, 2026.12.8), an
   * address (10.0.0.1) or a fraction (1/2) is left alone.
   */
  localeDate:
    /(?<![\d./-])(?:\d{1,2}(\. |[./-])\d{1,2}\1(?:19|20)\d{2}|(?:19|20)\d{2}(?:\/\d{1,2}\/\d{1,2}|\. \d{1,2}\. \d{1,2}\.))(?![\d/-]|\.\d)/g,
  /**
   * A time as toLocaleTimeString() prints it, with seconds: 15:56:18, 3:56:18 PM, 3:56:18 p.m.
   * Without seconds (12:30) it is left alone: that is more often a time someone chose.
   */
  localeTime: /(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d:[0-5]\d(?:\s?(?:[AaPp][Mm]|[ap]\.m\.))?(?![\d:])/g,
});

/** One replaced span, for miss messages. */
export interface VolatileSpan {
  /** The text that was replaced. */
  text: string;
  /** Which message (0 is the system prompt when there is one). */
  message: number;
  /** The pattern's source. */
  pattern: string;
}

const compiled = new WeakMap<readonly unknown[], RegExp[]>();

/**
 * The patterns as global regular expressions (strings are pattern sources, as given on the
 * command line). Throws E_ARG for anything else, or a pattern that matches the empty string
 * (it would mark every position).
 */
export function volatilePatterns(list: unknown): RegExp[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw badList(list);
  const known = compiled.get(list);
  if (known) return known;
  const out = list.map((p) => {
    let re: RegExp;
    if (p instanceof RegExp) re = new RegExp(p.source, p.flags.includes('g') ? p.flags : `${p.flags}g`);
    else if (typeof p === 'string') {
      try {
        re = new RegExp(p, 'g');
      } catch (e) {
        throw new TapedeckError('E_ARG', `volatileText: ${JSON.stringify(p)} is not a regular expression (${(e as Error).message}).`, {
          hint: 'e.g. --volatile-text "\\d{4}-\\d{2}-\\d{2}" for dates.',
        });
      }
    } else throw badList(list);
    if (new RegExp(re.source, re.flags.replace('g', '')).test('')) {
      throw new TapedeckError('E_ARG', `volatileText: /${re.source}/ matches the empty string.`, { hint: 'Give a pattern that matches at least one character, e.g. \\d+ rather than \\d*.' });
    }
    return re;
  });
  compiled.set(list, out);
  return out;
}

function badList(v: unknown): TapedeckError {
  return new TapedeckError('E_ARG', `volatileText must be an array of regular expressions; got ${Array.isArray(v) ? 'an array with something else in it' : typeof v}.`, {
    hint: 'e.g. { volatileText: [/\\d{4}-\\d{2}-\\d{2}/] } (or --volatile-text PATTERN, repeatable).',
  });
}

/**
 * The text with every match of every pattern replaced by VOLATILE_MARK; matches go to `spans`
 * (as of message `message`). Also how an MCP call's params leave volatile text out of its key.
 *
 * @example
 * replaceIn('at 2026-01-05', [/\d{4}-\d{2}-\d{2}/g]) // 'at <volatile>'
 */
export function replaceIn(text: string, patterns: readonly RegExp[], message = 0, spans?: VolatileSpan[]): string {
  let out = text;
  for (const re of patterns) {
    re.lastIndex = 0;
    out = out.replace(re, (m) => {
      spans?.push({ text: m, message, pattern: re.source });
      return VOLATILE_MARK;
    });
  }
  return out;
}

/**
 * Normalized messages with volatile text replaced in their text parts (at any depth: a tool
 * result's parts too). Returns the input itself when nothing matched; never mutates it.
 *
 * @example
 * replaceVolatileText(view.messages, [/\d{4}-\d{2}-\d{2}/g]) // "Today is <volatile>."
 */
export function replaceVolatileText(messages: readonly unknown[], patterns: readonly RegExp[], spans?: VolatileSpan[]): unknown[] {
  if (patterns.length === 0) return messages as unknown[];
  let changed = false;
  const walk = (v: unknown, message: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      v.forEach((x, i) => {
        const y = walk(x, message);
        if (y !== x) (out ??= v.slice())[i] = y;
      });
      return out ?? v;
    }
    const o = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    if (o.type === 'text' && typeof o.text === 'string') {
      const t = replaceIn(o.text, patterns, message, spans);
      if (t !== o.text) out = { ...o, text: t };
    }
    for (const k of Object.keys(o)) {
      if (k === 'text' && out) continue;
      const x = o[k];
      if (x === null || typeof x !== 'object') continue;
      const y = walk(x, message);
      if (y !== x) (out ??= { ...o })[k] = y;
    }
    if (out) changed = true;
    return out ?? o;
  };
  const result = messages.map((m, i) => walk(m, i));
  return changed ? result : (messages as unknown[]);
}

/**
 * The spans volatileText replaced in normalized messages (computed on a miss only), as a line
 * for the miss message, or undefined when nothing was replaced.
 *
 * @example
 * volatileLine(spans) // 'volatile text replaced before keying: "2026-11-25" (message 0)'
 */
export function volatileLine(spans: readonly VolatileSpan[]): string | undefined {
  if (spans.length === 0) return undefined;
  const shown = spans.slice(0, 5).map((s) => `${JSON.stringify(s.text.length > 60 ? `${s.text.slice(0, 59)}…` : s.text)} (message ${s.message})`);
  return `volatile text replaced before keying: ${shown.join(', ')}${spans.length > 5 ? `, and ${spans.length - 5} more` : ''}`;
}
