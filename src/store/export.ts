/**
 * Tape <-> JSON: a deterministic, pretty, reviewable JSON view of a tape, and its way back.
 *
 * ```json
 * {
 *   "header": { "created": "...", "formatVersion": 1, "tapedeckVersion": "..." },
 *   "records": [ ...record values, in file order... ],
 *   "warnings": [ { "code": "E_TAPE_TORN_TAIL", "message": "...", "offset": 1234 } ]
 * }
 * ```
 *
 * Values JSON cannot hold are tagged objects with a `"$type"` key:
 *
 * | value                         | JSON                                                              |
 * | ----------------------------- | ----------------------------------------------------------------- |
 * | Uint8Array holding JSON text  | `{ "$type": "bytes", "json", "indent"?, "newline"? }` (see below)   |
 * | Uint8Array holding UTF-8 text | `{ "$type": "bytes", "text" }`                                    |
 * | other Uint8Array              | `{ "$type": "bytes", "base64" }`                                  |
 * | Buffer                        | `{ "$type": "Buffer", "base64" }`                                 |
 * | other typed arrays            | `{ "$type": "<TypedArrayName>", "base64" }` (memory bytes, platform byte order) |
 * | ArrayBuffer                   | `{ "$type": "ArrayBuffer", "base64" }`                            |
 * | DataView                      | `{ "$type": "DataView", "base64" }` (the bytes it views)          |
 * | Date                          | `{ "$type": "date", "iso" }` (`iso` is null for an invalid Date)  |
 * | Map                           | `{ "$type": "map", "entries": [[k, v], ...] }` (entry order kept) |
 * | Set                           | `{ "$type": "set", "values": [...] }`                             |
 * | bigint                        | `{ "$type": "bigint", "value": "123" }`                           |
 * | Error                         | `{ "$type": "error", "name", "message", "cause"? }`               |
 * | RegExp                        | `{ "$type": "regexp", "source", "flags" }`                        |
 * | undefined                     | `{ "$type": "undefined" }`                                        |
 * | NaN, ±Infinity, -0            | `{ "$type": "number", "value": "NaN" \| "Infinity" \| "-Infinity" \| "-0" }` |
 * | plain object with a `$type` key | `{ "$type": "object", "value": { ... } }`                       |
 * | registered class (registerTapeType) | `{ "$type": "ext", "name", "value" }` (`value` = its write()) |
 * | a class this process has not registered | `{ "$type": "ext", "name": "#<type>", "value" }` (import: the class registered with that number, else the same bytes) |
 *
 * Recorded HTTP answers are bytes. So that a reviewer reads a JSON answer as JSON, bytes whose
 * text `JSON.stringify(JSON.parse(text), null, indent)` (indent 0 or 2, plus an optional final
 * newline) reproduces exactly are written as that JSON value, in its own key order; import writes
 * the same bytes back. Other valid UTF-8 (a server-sent-event stream, plain text) is a string;
 * anything else is base64. Either way import gives back the bytes, byte for byte.
 *
 * Determinism: object keys are sorted by UTF-16 code units (objects inside a Map, Set, Error
 * cause or registered type's value keep their stored order, as writers keep it), indentation is 2 spaces, the text
 * ends with a newline, and records carry no byte offsets, so export -> import -> export gives the
 * same bytes. Warnings (damage readTape survived) are listed for the reviewer with the file name
 * stripped from their messages; they are not records and import ignores them, so a re-export of
 * an imported damaged tape has none.
 */
import { existsSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { TapedeckError } from '../errors.ts';
import { checkOptionNames, describeArgument } from '../option-names.ts';
import { asTargetError, besideTarget, intoPlace, refuseOpenWriters } from './import/target.ts';
import { inRecordOrder } from './record-order.ts';
import { currentHttpKey, isHttpRecord, type HttpRecord } from './records.ts';
import { newerRecordVersion, recordVersionError } from './record-version.ts';
import { keyIsCurrent } from '../match/rekey.ts';
import { streamReview } from './stream-review.ts';
import { appendRecords, createTape, tapeTypeNamed, tapeTypeOf } from './tape-file.ts';
import { warningText, type TapeWarning } from './tape-codec.ts';
import { decodedRecords, withTapeStream, type TapeStream } from './tape-stream.ts';
import { base64Text, childPath, isTypedArrayName, MAX_NESTING, parseTapeDocument, TYPED_ARRAYS } from './tape-json.ts';
import { writerFor, type OutputSink } from './chunked-write.ts';
import { originOf } from './origins.ts';
import { secretsInValue } from './secret-scan.ts';
import { REDACTED, redactor } from './redact.ts';
import { isArrayBuffer } from '../bytes.ts';

/** A JSON value as built for output; objects have a null prototype so any key is a plain key. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

function newObject(): { [k: string]: JsonValue } {
  return Object.create(null) as { [k: string]: JsonValue };
}

function tagged(type: string, fields: Record<string, JsonValue>): JsonValue {
  const o = newObject();
  o.$type = type;
  for (const k of Object.keys(fields)) o[k] = fields[k] as JsonValue;
  return o;
}

/** A value already in its JSON form (the review form of a stream). */
class Prebuilt {
  constructor(readonly json: JsonValue) {}
}

/** A JSON answer kept as its own text: written in its key order, not sorted. */
class VerbatimJson {
  constructor(readonly value: unknown) {}
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * What a Uint8Array is exported as (see the table above): JSON text kept as its parsed value with
 * the indent and final newline that give its bytes back, UTF-8 text, or base64.
 */
type BytesForm = { json: unknown; indent: 0 | 2; newline: boolean } | { text: string } | { base64: string };

function bytesForm(bytes: Uint8Array): BytesForm {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { base64: base64Of(bytes) };
  }
  const newline = text.endsWith('\n');
  const body = newline ? text.slice(0, -1) : text;
  const first = body[0];
  if (first === '{' || first === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) {
      for (const indent of [0, 2] as const) {
        if (JSON.stringify(parsed, null, indent) === body) return { json: parsed, indent, newline };
      }
    }
  }
  // Control characters other than tab and line breaks mean binary that happens to decode.
  return /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text) ? { base64: base64Of(bytes) } : { text };
}

/** The export form of a Uint8Array as a tagged value (see bytesForm). */
function bytesToJson(bytes: Uint8Array): JsonValue {
  const form = bytesForm(bytes);
  if (!('json' in form)) return tagged('bytes', form);
  const fields: Record<string, JsonValue> = { json: new VerbatimJson(form.json) as unknown as JsonValue };
  if (form.indent) fields.indent = form.indent;
  if (form.newline) fields.newline = true;
  return tagged('bytes', fields);
}

/** stringify(bytesToJson(bytes), indent) without the tagged object: its members in sorted order. */
function bytesText(bytes: Uint8Array, indent: string, parts: string[]): void {
  const form = bytesForm(bytes);
  const inner = `${indent}  `;
  parts.push(`{\n${inner}"$type": "bytes",\n`);
  if ('json' in form) {
    if (form.indent) parts.push(`${inner}"indent": 2,\n`);
    parts.push(`${inner}"json": `, verbatimText(form.json, inner));
    if (form.newline) parts.push(`,\n${inner}"newline": true`);
  } else if ('text' in form) parts.push(`${inner}"text": `, JSON.stringify(form.text));
  else parts.push(`${inner}"base64": `, JSON.stringify(form.base64));
  parts.push(`\n${indent}}`);
}

/** A JSON answer in its own key order, indented 2 spaces a level from `indent`. */
const verbatimText = (value: unknown, indent: string): string => JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`);

function base64Of(view: ArrayBufferView): string {
  return base64Text(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

// Objects inside a Map, a Set, an Error's cause or a registered type's value: writers keep their
// members in the order given (sortedKeys sorts plain objects and arrays only), so the export
// prints them in that order, and import, which keeps the JSON's order, writes the same bytes.
const ownOrder = new WeakSet<object>();
// How many such containers the value being converted is inside: a counter, not a parameter, as
// toJson's frames are what limits how deep a value can nest before the stack runs out.
let inOwnOrder = 0;

/** toJson() of a value inside a Map, Set, Error cause or registered type (see ownOrder). */
function ownJson(value: unknown, path: string, depth: number): JsonValue {
  inOwnOrder++;
  try {
    return toJson(value, path, depth);
  } finally {
    inOwnOrder--;
  }
}

function toJson(value: unknown, path: string, depth: number): JsonValue {
  if (depth > MAX_NESTING) {
    throw new TapedeckError('E_DEPTH', `Tape value nests deeper than ${MAX_NESTING} levels at ${path}; it cannot be exported.`, { path });
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'undefined':
      return tagged('undefined', {});
    case 'bigint':
      return tagged('bigint', { value: value.toString() });
    case 'number':
      if (Number.isNaN(value)) return tagged('number', { value: 'NaN' });
      if (value === Infinity) return tagged('number', { value: 'Infinity' });
      if (value === -Infinity) return tagged('number', { value: '-Infinity' });
      if (Object.is(value, -0)) return tagged('number', { value: '-0' });
      return value;
    case 'object':
      break;
    default:
      throw new TapedeckError('E_TYPE', `A ${typeof value} at ${path} has no JSON export form.`, { path });
  }
  if (value === null) return null;
  if (value instanceof Prebuilt) return value.json;
  const next = depth + 1;
  if (Array.isArray(value)) {
    const out: JsonValue[] = [];
    for (let i = 0; i < value.length; i++) out.push(toJson(value[i], childPath(path, i), next));
    return out;
  }
  if (ArrayBuffer.isView(value)) {
    if (Buffer.isBuffer(value)) return tagged('Buffer', { base64: base64Of(value) });
    const ctor = (value as { constructor?: { name?: unknown } }).constructor;
    if (ctor === Uint8Array) return bytesToJson(value as Uint8Array);
    const name = ctor?.name;
    if (typeof name === 'string' && isTypedArrayName(name) && ctor === TYPED_ARRAYS[name]) {
      return tagged(name, { base64: base64Of(value) });
    }
    // msgpackr stores a DataView (and an ArrayBuffer, below) and reads it back as one.
    if (value instanceof DataView) return tagged('DataView', { base64: base64Of(value) });
    throw new TapedeckError('E_TYPE', `A ${String(name)} at ${path} has no JSON export form.`, { path });
  }
  if (isArrayBuffer(value)) return tagged('ArrayBuffer', { base64: base64Of(new Uint8Array(value)) });
  if (value instanceof Date) {
    const t = value.getTime();
    return tagged('date', { iso: Number.isNaN(t) ? null : value.toISOString() });
  }
  if (value instanceof Map) {
    const entries: JsonValue[] = [];
    let i = 0;
    for (const [k, v] of value) {
      const at = childPath(childPath(path, 'entries'), i);
      entries.push([ownJson(k, childPath(at, 0), next + 1), ownJson(v, childPath(at, 1), next + 1)]);
      i++;
    }
    return tagged('map', { entries });
  }
  if (value instanceof Set) {
    const values: JsonValue[] = [];
    let i = 0;
    for (const v of value) values.push(ownJson(v, childPath(childPath(path, 'values'), i++), next));
    return tagged('set', { values });
  }
  if (value instanceof Error) {
    const fields: Record<string, JsonValue> = { name: String(value.name), message: String(value.message) };
    if (Object.hasOwn(value, 'cause')) fields.cause = ownJson(value.cause, childPath(path, 'cause'), next);
    return tagged('error', fields);
  }
  if (value instanceof RegExp) return tagged('regexp', { source: value.source, flags: value.flags });
  const userType = tapeTypeOf(value);
  if (userType) return tagged('ext', { name: userType.name, value: ownJson(userType.write(value), childPath(path, 'value'), next) });
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    throw new TapedeckError('E_TYPE', `A ${typeof name === 'string' ? name : 'class instance'} at ${path} has no JSON export form.`, { path });
  }
  const obj = value as Record<string, unknown>;
  const escaped = Object.hasOwn(obj, '$type');
  const out = newObject();
  const base = escaped ? childPath(path, 'value') : path;
  for (const key of Object.keys(obj)) out[key] = toJson(obj[key], childPath(base, key), escaped ? next + 1 : next);
  if (inOwnOrder > 0) ownOrder.add(out);
  return escaped ? tagged('object', { value: out }) : out;
}

/** Pretty-print with sorted keys (UTF-16 code unit order) and 2-space indent. */
function stringify(value: JsonValue, indent: string, parts: string[]): void {
  if (value === null || typeof value !== 'object') {
    parts.push(JSON.stringify(value));
    return;
  }
  if (value instanceof VerbatimJson) {
    parts.push(verbatimText(value.value, indent));
    return;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      parts.push('[]');
      return;
    }
    parts.push('[\n');
    value.forEach((v, i) => {
      parts.push(inner);
      stringify(v, inner, parts);
      parts.push(i < value.length - 1 ? ',\n' : '\n');
    });
    parts.push(`${indent}]`);
    return;
  }
  const keys = ownOrder.has(value) ? Object.keys(value) : Object.keys(value).sort();
  if (keys.length === 0) {
    parts.push('{}');
    return;
  }
  parts.push('{\n');
  keys.forEach((k, i) => {
    parts.push(`${inner}${JSON.stringify(k)}: `);
    stringify(value[k] as JsonValue, inner, parts);
    parts.push(i < keys.length - 1 ? ',\n' : '\n');
  });
  parts.push(`${indent}}`);
}

/** A JSON value as stringify() writes it, indented by `indent` after its first line. */
function one(value: JsonValue, indent: string): string {
  const parts: string[] = [];
  stringify(value, indent, parts);
  return parts.join('');
}

// Where valueText() is in the record it writes: the record's path, then one member name or
// array index a level. Spelled (childPath) only where a value takes the general path, which
// needs it for its errors: a record's hundreds of values cost no path strings.
let textBase = '$';
const textTrail: (string | number)[] = [];
const textPath = (): string => textTrail.reduce<string>((p, k) => childPath(p, k), textBase);

/** An object's member names in export order, and each as it is written before its value. */
interface Members {
  names: readonly string[];
  sorted: readonly string[];
  labels: readonly string[];
}

// Member lists met before, by their first name: a tape's records repeat a few shapes, whose
// names are then sorted and quoted once (a sort and a JSON.stringify per name were ~15% of the
// export). A list is taken only when every name matches, in order. Bounded: objects keyed by
// data (a map of ids) would otherwise add a list per record.
const knownMembers = new Map<string, Members[]>();
const SHAPES_PER_NAME = 8;
const FIRST_NAMES = 256;

function membersOf(names: string[]): Members {
  const first = names[0] ?? '';
  const lists = knownMembers.get(first);
  if (lists !== undefined) {
    for (const known of lists) {
      if (known.names.length !== names.length) continue;
      let i = 0;
      while (i < names.length && known.names[i] === names[i]) i++;
      if (i === names.length) return known;
    }
  }
  const sorted = [...names].sort();
  const m: Members = { names, sorted, labels: sorted.map((k) => `${JSON.stringify(k)}: `) };
  if (lists === undefined) {
    if (knownMembers.size < FIRST_NAMES) knownMembers.set(first, [m]);
  } else if (lists.length < SHAPES_PER_NAME) lists.push(m);
  return m;
}

/**
 * The export text of one record, as `one(toJson(value, path, 1), indent)` writes it, byte for
 * byte, in one pass: what records are made of (plain objects, arrays, strings, finite numbers,
 * booleans, null, bytes) is written as it is met, without building the JSON tree first or a path
 * string per value; anything else (tagged values, an object with a `$type` member, a value that
 * has no export form) goes through toJson() and stringify() as before, with its path. Measured
 * on the 100,000-record bench tape: the tree of null-prototype objects, the pieces array and one
 * path string per value were ~60% of the export's CPU time. Internal to src/store.
 *
 * @example
 * recordText({ kind: 'http', status: 200 }, '$.records[0]', '    ') // '{\n      "kind": "http",\n      "status": 200\n    }'
 */
export function recordText(value: unknown, path: string, indent: string): string {
  textBase = path;
  textTrail.length = 0;
  const parts: string[] = [];
  valueText(value, indent, 1, parts);
  // Joined, not built by +=: a rope of a record's hundreds of pieces costs more to flatten when
  // the text is encoded for output (~2x the encoding's time on the bench tape).
  return parts.join('');
}

/**
 * recordText() the general way: the JSON tree first (toJson), then its text (stringify). The
 * reference recordText() is held to (test/store/export-text.test.ts). Internal to src/store.
 *
 * @example
 * recordTextReference(record, '$.records[0]', '    ') === recordText(record, '$.records[0]', '    ')
 */
export function recordTextReference(value: unknown, path: string, indent: string): string {
  return one(toJson(value, path, 1), indent);
}

function valueText(value: unknown, indent: string, depth: number, parts: string[]): void {
  // Past the limit toJson() throws E_DEPTH with the path.
  if (depth <= MAX_NESTING) {
    switch (typeof value) {
      case 'string':
        parts.push(JSON.stringify(value));
        return;
      case 'boolean':
        parts.push(value ? 'true' : 'false');
        return;
      case 'number':
        // Finite and not -0: JSON.stringify's spelling, which is String()'s; the rest are tagged.
        if (Number.isFinite(value) && (value !== 0 || 1 / value > 0)) {
          parts.push(String(value));
          return;
        }
        break;
      case 'object': {
        if (value === null) {
          parts.push('null');
          return;
        }
        const inner = `${indent}  `;
        if (Array.isArray(value)) {
          const n = value.length;
          if (n === 0) {
            parts.push('[]');
            return;
          }
          parts.push('[\n');
          for (let i = 0; i < n; i++) {
            parts.push(inner);
            textTrail.push(i);
            valueText(value[i], inner, depth + 1, parts);
            textTrail.pop();
            parts.push(i < n - 1 ? ',\n' : '\n');
          }
          parts.push(`${indent}]`);
          return;
        }
        // Bytes: their form is bytesToJson's, written as before.
        if (ArrayBuffer.isView(value) && !Buffer.isBuffer(value) && (value as { constructor?: unknown }).constructor === Uint8Array) {
          bytesText(value as Uint8Array, indent, parts);
          return;
        }
        const proto = Object.getPrototypeOf(value) as unknown;
        // A plain object (toJson() asks whether it is a registered type first: so does this).
        if ((proto === Object.prototype || proto === null) && !Object.hasOwn(value, '$type') && tapeTypeOf(value) === undefined) {
          const obj = value as Record<string, unknown>;
          const { sorted, labels } = membersOf(Object.keys(obj));
          const n = sorted.length;
          if (n === 0) {
            parts.push('{}');
            return;
          }
          parts.push('{\n');
          for (let i = 0; i < n; i++) {
            const k = sorted[i]!;
            parts.push(inner, labels[i]!);
            textTrail.push(k);
            valueText(obj[k], inner, depth + 1, parts);
            textTrail.pop();
            parts.push(i < n - 1 ? ',\n' : '\n');
          }
          parts.push(`${indent}}`);
          return;
        }
        break;
      }
    }
  }
  stringify(toJson(value, textPath(), depth), indent, parts);
}

/** A record with a streamed answer's body in its review form (stream-review.ts). */
function forReview(value: unknown): unknown {
  const review = streamReview(value);
  if (!review) return value;
  const rec = value as HttpRecord;
  const body = tagged('stream', { answer: toJson(review.answer, '$.answer', 1), events: review.events });
  return { ...rec, response: { ...rec.response, body: new Prebuilt(body) } };
}

/**
 * Deterministic, pretty JSON of a tape for code review: header, then records in file order;
 * object keys sorted (UTF-16 order), 2-space indent, trailing newline; values JSON cannot hold
 * are tagged `{ "$type": ... }` objects (see the table at the top of this file). Damaged records
 * (readTape warnings) are listed under "warnings" and not exported as records.
 *
 * With `{ review: true }` (`tapedeck export --review`, what `git diff` shows after `tapedeck
 * init`) a streamed answer's body is `{ "$type": "stream", "answer", "events" }`: the answer it
 * stands for and its events one per line. That form is for reading; it does not import.
 *
 * @example
 * await writeFile('chat.tape.json', await exportTapeJSON('chat.tape'));
 */
export async function exportTapeJSON(path: string, opts: { review?: boolean } = {}): Promise<string> {
  // `{ reveiw: true }` otherwise exported without the review form, silently.
  checkOptionNames(opts, ['review'], 'exportTapeJSON', 'docs/tape-format.md');
  const parts: string[] = [];
  await writeTapeJSON(path, (text) => void parts.push(text), opts);
  return parts.join('');
}

/**
 * {@link exportTapeJSON}, written out as it is made: records are decoded, converted and handed to
 * `write` one after another (in pieces of about 64 KB; a promise `write` returns is awaited, so
 * a slow reader holds the export back), so memory does not grow with the tape. The text is the
 * same, byte for byte (`review`: as for exportTapeJSON). Resolves with the damage the export
 * left out (the "warnings" it wrote): the CLI says it on stderr and exits 1, as a JSON member
 * alone is read by no one (tapedeck import ignores it).
 *
 * @example
 * const { warnings } = await writeTapeJSON('chat.tape', (text) => new Promise((done) => (process.stdout.write(text) ? done() : process.stdout.once('drain', done))));
 */
export async function writeTapeJSON(path: string, write: OutputSink, opts: { review?: boolean } = {}): Promise<{ warnings: TapeWarning[] }> {
  checkOptionNames(opts, ['review'], 'writeTapeJSON', 'docs/tape-format.md');
  // Read a window at a time (tape-stream.ts): memory stays the same whatever the tape's size.
  return withTapeStream(path, (scan) => writeFrom(scan, path, write, opts));
}

async function writeFrom(scan: TapeStream, path: string, write: OutputSink, opts: { review?: boolean }): Promise<{ warnings: TapeWarning[] }> {
  const { out, flush } = writerFor(write);
  await out(`{\n  "header": ${one(toJson({ ...scan.header }, '$.header', 0), '  ')},\n  "records": `);
  let count = 0;
  let previous: string | undefined;
  for await (const r of decodedRecords(scan, path)) {
    // The record before is written once it is known not to be the last (its comma depends on it).
    if (previous !== undefined) await out(`${count === 1 ? '[\n' : ''}    ${previous},\n`);
    previous = recordText(opts.review ? forReview(r.value) : r.value, `$.records[${count}]`, '    ');
    count++;
  }
  if (previous === undefined) await out('[]');
  else await out(`${count === 1 ? '[\n' : ''}    ${previous}\n  ]`);
  // Damage in file order, a payload that does not decode among it (decodedRecords).
  const warnings = scan.warnings.map((w) => {
    const o = newObject();
    o.code = w.code;
    o.offset = w.offset;
    o.message = warningText(w, path);
    return o;
  });
  await out(`,\n  "warnings": ${one(warnings, '  ')}\n}\n`);
  await flush();
  return { warnings: [...scan.warnings] };
}

/**
 * Read JSON written by {@link exportTapeJSON} and write a new tape at `out` with the same header
 * fields and the same records in order. The whole document is checked before anything is
 * written; malformed input throws `E_TAPE_IMPORT` naming the JSON path of the problem (such as
 * `$.records[3].value.entries[0]`); a record of a record version newer than this tapedeck reads
 * (a newer tapedeck's export) throws `E_TAPE_VERSION` naming it. The tape is built next to `out` and moved into place, so
 * `out` never holds a partial tape; an existing `out` is refused with `E_TAPE_EXISTS` unless
 * `{ force: true }`, which replaces it atomically.
 *
 * An HTTP exchange's stored key is checked against its request: a request edited in the JSON
 * (a prompt changed by hand) would otherwise keep the old request's key, and the old request
 * would be answered with the edited answer. Such a record is keyed from its request again
 * (`ignoreArgs`: the arguments the recording left out of its keys, as `--ignore` gives them);
 * `rekeyed` counts them. `keepKeys: true` keeps every stored key as it is. An edited record that
 * holds a secret is refused (`E_IMPORT_ENTRY`); a key pasted into a provider credential header
 * (`authorization`, `x-api-key`, ...) is masked to `[REDACTED]` as recording masks it, and
 * `masked` counts those values (absent when none).
 *
 * @example
 * const { records, rekeyed } = await importTapeJSON(readFileSync('app.tape.json', 'utf8'), 'app.tape', { force: true })
 */
export async function importTapeJSON(json: string, out: string, opts: { force?: boolean; ignoreArgs?: readonly string[]; keepKeys?: boolean } = {}): Promise<{ records: number; rekeyed: number; masked?: number }> {
  // A parsed document given for its text read as "[object Object] is not valid JSON".
  checkOptionNames(opts, ['force', 'ignoreArgs', 'keepKeys'], 'importTapeJSON', 'docs/tape-format.md');
  if (typeof json !== 'string') {
    throw new TapedeckError('E_ARG', `importTapeJSON takes the JSON text of an export (a string); got ${describeArgument(json)}.`, { hint: 'Pass the exported text as read from its file, or JSON.stringify(doc) of a parsed one.' });
  }
  const { created, tapedeckVersion, salt, more, values } = parseTapeDocument(json, tapeTypeNamed);
  refuseNewerRecords(values);
  storedOrigins(values);
  const masked = maskCredentialHeaders(values);
  // `keepKeys`: the stored keys as they are (a format test's made-up records).
  const rekeyed = opts.keepKeys === true ? 0 : rekeyEdited(values, opts.ignoreArgs);
  // A tape a writer has open is not replaced (see import/target.ts): said before the work.
  if (opts.force && existsSync(out)) await refuseOpenWriters(out);
  const { tmp, removeDirs } = await besideTarget(out, 'import');
  let written = false;
  try {
    // The salt travels with the records: their keyed masks only match under it.
    try {
      await createTape(tmp, { created, tapedeckVersion, salt: salt ?? null, ...(more ? { more } : {}) });
      // Records come back in the field order writers use (record-order.ts), so a tape written
      // by tapedeck survives export -> import byte for byte.
      if (values.length > 0) await appendRecords(tmp, values.map(inRecordOrder));
    } catch (e) {
      throw asTargetError(e, tmp, out);
    }
    const exists = () =>
      new TapedeckError('E_TAPE_EXISTS', `Tape ${out} already exists; an import does not overwrite it.`, {
        file: out,
        hint: 'Pass { force: true } to replace it, or import to another path.',
      });
    try {
      await intoPlace(tmp, out, opts.force === true, exists);
    } catch (e) {
      if (e instanceof TapedeckError) throw e;
      throw new TapedeckError('E_TAPE_IO', `Tape ${out}: moving the imported tape into place failed: ${(e as Error).message}`, { file: out });
    }
    written = true;
  } finally {
    await unlink(tmp).catch(() => {});
    if (!written) await removeDirs();
  }
  // `masked` only when a credential header was masked: said to the user (tapedeck import warns).
  return { records: values.length, rekeyed, ...(masked > 0 ? { masked } : {}) };
}

/**
 * Masks the provider credential headers (`authorization`, `x-api-key`, ... as redaction names
 * them) of every HTTP exchange as recording does, in place; returns how many values changed. A
 * key pasted into one while editing the export changes no request key, so the edited-record check
 * (rekeyEdited) never sees it. Recording stores them as `[REDACTED]` already: a record tapedeck
 * wrote keeps its bytes.
 */
function maskCredentialHeaders(values: unknown[]): number {
  const credential = redactor().isCredentialHeader;
  let n = 0;
  const mask = (h: Record<string, string | string[]> | undefined): void => {
    if (h === null || typeof h !== 'object') return;
    for (const k of Object.keys(h)) {
      if (!credential(k)) continue;
      const x = h[k];
      const one = (v: unknown): unknown => (typeof v !== 'string' || v === '' || v === REDACTED ? v : (n++, REDACTED));
      h[k] = (Array.isArray(x) ? x.map(one) : one(x)) as string | string[];
    }
  };
  for (const v of values) {
    if (!isHttpRecord(v)) continue;
    mask(v.request?.headers);
    mask(v.response?.headers);
  }
  return n;
}

/**
 * Refuses records of a record version newer than this tapedeck reads (a newer tapedeck's
 * export), with E_TAPE_VERSION naming the first and how many there are: written as they are,
 * they would pass `tapedeck verify` and replay as damage, never telling anyone to upgrade.
 */
function refuseNewerRecords(values: unknown[]): void {
  let first: { i: number; newer: NonNullable<ReturnType<typeof newerRecordVersion>> } | undefined;
  let more = 0;
  for (let i = 0; i < values.length; i++) {
    const newer = newerRecordVersion(values[i]);
    if (newer === undefined) continue;
    if (first === undefined) first = { i, newer };
    else more++;
  }
  if (first === undefined) return;
  const others = more > 0 ? ` (and ${more} more record${more === 1 ? '' : 's'} after it)` : '';
  throw recordVersionError(`Cannot import tape JSON: record ${first.i} ($.records[${first.i}])${others}`, first.newer, { path: `$.records[${first.i}].v`, entry: first.i, records: more + 1 });
}

/**
 * Puts each HTTP exchange's `origin` in the form records store it (src/store/origins.ts), in
 * place: one edited by hand may carry a user and password, which never reach the tape, or an
 * uppercase host. An origin that is no http(s) URL is refused with its JSON path. A record
 * tapedeck wrote keeps its bytes.
 */
function storedOrigins(values: unknown[]): void {
  values.forEach((v, i) => {
    if (!isHttpRecord(v) || v.origin === undefined) return;
    const stored = typeof v.origin === 'string' ? originOf(v.origin) : undefined;
    if (stored === undefined) {
      throw new TapedeckError('E_TAPE_IMPORT', `Cannot import tape JSON: expected an http(s) origin such as "https://api.openai.com", found ${JSON.stringify(v.origin)} at $.records[${i}].origin.`, {
        path: `$.records[${i}].origin`,
        hint: 'Write the origin the recording was made for as scheme://host[:port], or leave `origin` out for a recording that answers any host.',
      });
    }
    if (stored !== v.origin) v.origin = stored;
  });
}

/**
 * Keys each HTTP exchange (LLM or JSON body, current key version) from its request where the
 * stored key differs (see importTapeJSON), in place; returns how many. A record unchanged since
 * export keeps its bytes: its key is the one its request gives.
 */
/**
 * An edited record (its request no longer keys as filed) is looked at as `tapedeck scan` looks
 * at a tape: a key pasted into it would reach the disk in clear, since an import writes records
 * as they are (an unedited record was redacted when it was recorded). Refused before anything
 * is written, with the record and what it holds.
 */
function refuseEditedSecret(v: unknown, i: number): void {
  const found = secretsInValue(v);
  if (found.length === 0) return;
  const f = found[0]!;
  throw new TapedeckError('E_IMPORT_ENTRY', `Cannot import tape JSON: record ${i} ($.records[${i}]) was edited and holds a secret (${f.kind} ${f.excerpt} at ${f.path}); no tape written.`, {
    entry: i,
    path: `$.records[${i}]${f.path.slice(1)}`,
    hint: 'Take the secret out of the edited record and import again; to add an answer by hand with secrets masked, use tapedeck add.',
  });
}

function rekeyEdited(values: unknown[], ignoreArgs: readonly string[] | undefined): number {
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!isHttpRecord(v) || (v.match !== 'llm' && v.match !== 'json') || !keyIsCurrent(v.keyVersion) || v.request === undefined) continue;
    // As a record of an older key version: computed from the stored request, not taken as filed.
    const now = currentHttpKey({ ...v, keyVersion: undefined } as unknown as HttpRecord, { ...(ignoreArgs ? { ignoreArgs: [...ignoreArgs] } : {}), endpoint: { method: v.request.method, url: v.request.url } });
    if (now.key === v.key && now.match === v.match) continue;
    refuseEditedSecret(v, i);
    (v as { key: string }).key = now.key;
    (v as { match: string }).match = now.match;
    n++;
  }
  return n;
}
