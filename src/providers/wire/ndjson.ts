/**
 * Newline-delimited JSON (NDJSON, `application/x-ndjson`): one JSON value per line, the framing
 * of Ollama's streamed answers. Pure functions over text or bytes, no I/O.
 *
 * A stream that is cut mid-answer usually ends in a partial line (no newline yet, a JSON text
 * that does not parse). Splitting keeps that tail apart, so a reader can tell "the last object
 * arrived whole" from "the connection closed halfway through it": only values from lines a
 * newline ended, or a last line that parses as a whole JSON value, are values of the stream.
 */
import { isBytes } from '../../bytes.ts';

/** A stream split into its lines: those a line end closed, and the text after the last one. */
export interface NdjsonLines {
  /** Lines ended by LF (a CR before it is dropped), blank ones left out. */
  lines: string[];
  /** The text after the last line end: empty for a stream that ends with a newline. */
  rest: string;
}

/** The values of an NDJSON stream, and what of it was no value. */
export interface NdjsonValues {
  /** Each line's JSON value, in order; a last line without a newline is one if it parses whole. */
  values: unknown[];
  /** Lines (a line end closed them) that are not JSON: a broken stream, or not NDJSON at all. */
  bad: number;
  /** A last line without a newline that does not parse: the stream was cut inside it. */
  partial: string;
}

const decoder = new TextDecoder('utf-8');

function textOf(input: Uint8Array | string): string {
  return typeof input === 'string' ? input : decoder.decode(input);
}

/**
 * Splits NDJSON text into complete lines and the unterminated rest.
 *
 * @example
 * splitNdjson('{"a":1}\n{"b":')  // { lines: ['{"a":1}'], rest: '{"b":' }
 */
export function splitNdjson(text: string): NdjsonLines {
  const end = text.lastIndexOf('\n');
  const rest = text.slice(end + 1);
  const lines: string[] = [];
  if (end >= 0) {
    for (const raw of text.slice(0, end).split('\n')) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() !== '') lines.push(line);
    }
  }
  return { lines, rest };
}

function parse(line: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch {
    return { ok: false };
  }
}

/**
 * The JSON values of an NDJSON stream (bytes as received, or their text).
 *
 * @example
 * parseNdjson('{"done":false}\n{"done":true}\n').values // [{ done: false }, { done: true }]
 * parseNdjson('{"done":false}\n{"do').partial            // '{"do'
 */
export function parseNdjson(input: Uint8Array | string): NdjsonValues {
  const text = textOf(input);
  const { lines, rest } = splitNdjson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const values: unknown[] = [];
  let bad = 0;
  for (const line of lines) {
    const p = parse(line);
    if (p.ok) values.push(p.value);
    else bad++;
  }
  let partial = '';
  if (rest.trim() !== '') {
    const p = parse(rest);
    if (p.ok) values.push(p.value);
    else partial = rest;
  }
  return { values, bad, partial };
}

/**
 * Whether an NDJSON stream is a whole answer: every line is JSON, none reports an `error`, and
 * the last value is one `isFinal` accepts (Ollama: `done: true`). A stream cut before its final
 * object, or inside it, is not whole. `input` may be the stream already parsed (parseNdjson), by
 * a caller that looked at its values first.
 *
 * @example
 * ndjsonComplete('{"done":false}\n', (v) => (v as { done?: unknown }).done === true) // false
 */
export function ndjsonComplete(input: Uint8Array | string | NdjsonValues, isFinal: (value: unknown) => boolean): boolean {
  const { values, bad, partial } = typeof input === 'string' || isBytes(input) ? parseNdjson(input) : input;
  if (bad > 0 || partial !== '' || values.length === 0) return false;
  for (const v of values) if (v !== null && typeof v === 'object' && 'error' in v) return false;
  return isFinal(values[values.length - 1]);
}
