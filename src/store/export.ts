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
 *
 * Recorded HTTP answers are bytes. So that a reviewer reads a JSON answer as JSON, bytes whose
 * text `JSON.stringify(JSON.parse(text), null, indent)` (indent 0 or 2, plus an optional final
 * newline) reproduces exactly are written as that JSON value, in its own key order; import writes
 * the same bytes back. Other valid UTF-8 (a server-sent-event stream, plain text) is a string;
 * anything else is base64. Either way import gives back the bytes, byte for byte.
 *
 * Determinism: object keys are sorted by UTF-16 code units, indentation is 2 spaces, the text
 * ends with a newline, and records carry no byte offsets, so export -> import -> export gives the
 * same bytes. Warnings (damage readTape survived) are listed for the reviewer with the file name
 * stripped from their messages; they are not records and import ignores them, so a re-export of
 * an imported damaged tape has none.
 */
import { randomBytes } from 'node:crypto';
import { link, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { inRecordOrder } from './record-order.ts';
import { appendRecords, createTape, readTape, TAPE_FORMAT_VERSION, tapeTypeNamed, tapeTypeOf } from './tape-file.ts';

/** A JSON value as built for output; objects have a null prototype so any key is a plain key. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** Deepest nesting exported or imported; deeper data would risk the call stack. */
const MAX_NESTING = 2000;

const TYPED_ARRAYS = {
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
type TypedArrayName = keyof typeof TYPED_ARRAYS;
const isTypedArrayName = (s: string): s is TypedArrayName => Object.hasOwn(TYPED_ARRAYS, s);

const SPECIAL_NUMBERS = new Map<string, number>([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
]);

const ERROR_CLASSES: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** `$.a.b`, `$["odd key"]`, `$[3]`. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function newObject(): { [k: string]: JsonValue } {
  return Object.create(null) as { [k: string]: JsonValue };
}

function tagged(type: string, fields: Record<string, JsonValue>): JsonValue {
  const o = newObject();
  o.$type = type;
  for (const k of Object.keys(fields)) o[k] = fields[k] as JsonValue;
  return o;
}

/** A JSON answer kept as its own text: written in its key order, not sorted. */
class VerbatimJson {
  constructor(readonly value: unknown) {}
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The export form of a Uint8Array: its JSON value, its text, or base64 (see the table above). */
function bytesToJson(bytes: Uint8Array): JsonValue {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return tagged('bytes', { base64: base64Of(bytes) });
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
      for (const indent of [0, 2]) {
        if (JSON.stringify(parsed, null, indent) !== body) continue;
        const fields: Record<string, JsonValue> = { json: new VerbatimJson(parsed) as unknown as JsonValue };
        if (indent) fields.indent = indent;
        if (newline) fields.newline = true;
        return tagged('bytes', fields);
      }
    }
  }
  // Control characters other than tab and line breaks mean binary that happens to decode.
  return /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text) ? tagged('bytes', { base64: base64Of(bytes) }) : tagged('bytes', { text });
}

function base64Of(view: ArrayBufferView): string {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

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
    throw new TapedeckError('E_TYPE', `A ${String(name)} at ${path} has no JSON export form.`, { path });
  }
  if (value instanceof Date) {
    const t = value.getTime();
    return tagged('date', { iso: Number.isNaN(t) ? null : value.toISOString() });
  }
  if (value instanceof Map) {
    const entries: JsonValue[] = [];
    let i = 0;
    for (const [k, v] of value) {
      const at = childPath(childPath(path, 'entries'), i);
      entries.push([toJson(k, childPath(at, 0), next + 1), toJson(v, childPath(at, 1), next + 1)]);
      i++;
    }
    return tagged('map', { entries });
  }
  if (value instanceof Set) {
    const values: JsonValue[] = [];
    let i = 0;
    for (const v of value) values.push(toJson(v, childPath(childPath(path, 'values'), i++), next));
    return tagged('set', { values });
  }
  if (value instanceof Error) {
    const fields: Record<string, JsonValue> = { name: String(value.name), message: String(value.message) };
    if (Object.hasOwn(value, 'cause')) fields.cause = toJson(value.cause, childPath(path, 'cause'), next);
    return tagged('error', fields);
  }
  if (value instanceof RegExp) return tagged('regexp', { source: value.source, flags: value.flags });
  const userType = tapeTypeOf(value);
  if (userType) return tagged('ext', { name: userType.name, value: toJson(userType.write(value), childPath(path, 'value'), next) });
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
  return escaped ? tagged('object', { value: out }) : out;
}

/** Pretty-print with sorted keys (UTF-16 code unit order) and 2-space indent. */
function stringify(value: JsonValue, indent: string, parts: string[]): void {
  if (value === null || typeof value !== 'object') {
    parts.push(JSON.stringify(value));
    return;
  }
  if (value instanceof VerbatimJson) {
    parts.push(JSON.stringify(value.value, null, 2).replaceAll('\n', `\n${indent}`));
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
  const keys = Object.keys(value).sort();
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

/**
 * Deterministic, pretty JSON of a tape for code review: header, then records in file order;
 * object keys sorted (UTF-16 order), 2-space indent, trailing newline; values JSON cannot hold
 * are tagged `{ "$type": ... }` objects (see the table at the top of this file). Damaged records
 * (readTape warnings) are listed under "warnings" and not exported as records.
 *
 * @example
 * await writeFile('chat.tape.json', await exportTapeJSON('chat.tape'));
 */
export async function exportTapeJSON(path: string): Promise<string> {
  const { header, records, warnings } = await readTape(path);
  const root = newObject();
  root.header = toJson({ ...header }, '$.header', 0);
  root.records = records.map((r, i) => toJson(r.value, `$.records[${i}]`, 1));
  const prefix = `${path}: `;
  root.warnings = warnings.map((w) => {
    const o = newObject();
    o.code = w.code;
    o.offset = w.offset;
    o.message = w.message.startsWith(prefix) ? w.message.slice(prefix.length) : w.message;
    return o;
  });
  const parts: string[] = [];
  stringify(root, '', parts);
  parts.push('\n');
  return parts.join('');
}

// ---------------------------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------------------------

function importError(path: string, what: string): TapedeckError {
  return new TapedeckError('E_TAPE_IMPORT', `Cannot import tape JSON: ${what} at ${path}.`, {
    path,
    hint: 'Import reads the JSON that exportTapeJSON writes; fix the value there or re-export the tape.',
  });
}

const isJsonObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** Exactly these keys besides `$type` (optional ones may be missing). */
function checkKeys(obj: Record<string, unknown>, path: string, type: string, required: string[], optional: string[] = []): void {
  for (const k of required) {
    if (!Object.hasOwn(obj, k)) throw importError(path, `a "${type}" value without "${k}"`);
  }
  for (const k of Object.keys(obj)) {
    if (k !== '$type' && !required.includes(k) && !optional.includes(k)) {
      throw importError(childPath(path, k), `unexpected key "${k}" in a "${type}" value`);
    }
  }
}

function expectString(obj: Record<string, unknown>, key: string, path: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw importError(childPath(path, key), `expected a string, found ${describe(v)}`);
  return v;
}

function decodeBase64(obj: Record<string, unknown>, path: string): Buffer {
  const s = expectString(obj, 'base64', path);
  const bytes = Buffer.from(s, 'base64');
  if (bytes.toString('base64') !== s) throw importError(childPath(path, 'base64'), 'invalid or non-canonical base64');
  return bytes;
}

function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty so a "__proto__" key stays data, never a prototype change.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function fromJson(json: unknown, path: string, depth: number): unknown {
  if (depth > MAX_NESTING) throw importError(path, `nesting deeper than ${MAX_NESTING} levels`);
  if (json === null || typeof json === 'string' || typeof json === 'boolean' || typeof json === 'number') return json;
  if (Array.isArray(json)) return json.map((v, i) => fromJson(v, childPath(path, i), depth + 1));
  if (!isJsonObject(json)) throw importError(path, `unexpected ${describe(json)}`);
  if (!Object.hasOwn(json, '$type')) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(json)) setKey(out, k, fromJson(json[k], childPath(path, k), depth + 1));
    return out;
  }
  const type = json.$type;
  if (typeof type !== 'string') throw importError(childPath(path, '$type'), `"$type" must be a string, found ${describe(type)}`);
  switch (type) {
    case 'undefined':
      checkKeys(json, path, type, []);
      return undefined;
    case 'number': {
      checkKeys(json, path, type, ['value']);
      const v = expectString(json, 'value', path);
      const n = SPECIAL_NUMBERS.get(v);
      if (n === undefined) {
        throw importError(childPath(path, 'value'), `expected "NaN", "Infinity", "-Infinity" or "-0", found ${JSON.stringify(v)}`);
      }
      return n;
    }
    case 'bigint': {
      checkKeys(json, path, type, ['value']);
      const v = expectString(json, 'value', path);
      if (!/^-?(0|[1-9][0-9]*)$/.test(v)) throw importError(childPath(path, 'value'), `expected a decimal integer, found ${JSON.stringify(v)}`);
      return BigInt(v);
    }
    case 'date': {
      checkKeys(json, path, type, ['iso']);
      if (json.iso === null) return new Date(NaN);
      const iso = expectString(json, 'iso', path);
      const d = new Date(iso);
      if (Number.isNaN(d.getTime())) throw importError(childPath(path, 'iso'), `not a valid date: ${JSON.stringify(iso)}`);
      return d;
    }
    case 'bytes': {
      if (Object.hasOwn(json, 'json')) {
        checkKeys(json, path, type, ['json'], ['indent', 'newline']);
        const indent = json.indent ?? 0;
        if (indent !== 0 && indent !== 2) throw importError(childPath(path, 'indent'), `expected 2 (or no "indent"), found ${describe(indent)}`);
        if (json.newline !== undefined && json.newline !== true) throw importError(childPath(path, 'newline'), `expected true (or no "newline"), found ${describe(json.newline)}`);
        return new TextEncoder().encode(JSON.stringify(json.json, null, indent) + (json.newline ? '\n' : ''));
      }
      if (Object.hasOwn(json, 'text')) {
        checkKeys(json, path, type, ['text']);
        return new TextEncoder().encode(expectString(json, 'text', path));
      }
      checkKeys(json, path, type, ['base64']);
      const b = decodeBase64(json, path);
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();
    }
    case 'Buffer':
      checkKeys(json, path, type, ['base64']);
      return Buffer.from(decodeBase64(json, path));
    case 'map': {
      checkKeys(json, path, type, ['entries']);
      const entriesPath = childPath(path, 'entries');
      if (!Array.isArray(json.entries)) throw importError(entriesPath, `expected an array of [key, value] pairs, found ${describe(json.entries)}`);
      const m = new Map<unknown, unknown>();
      json.entries.forEach((e: unknown, i) => {
        const at = childPath(entriesPath, i);
        if (!Array.isArray(e) || e.length !== 2) throw importError(at, `expected a [key, value] pair, found ${describe(e)}`);
        m.set(fromJson(e[0], childPath(at, 0), depth + 2), fromJson(e[1], childPath(at, 1), depth + 2));
      });
      return m;
    }
    case 'set': {
      checkKeys(json, path, type, ['values']);
      const valuesPath = childPath(path, 'values');
      if (!Array.isArray(json.values)) throw importError(valuesPath, `expected an array, found ${describe(json.values)}`);
      return new Set(json.values.map((v: unknown, i) => fromJson(v, childPath(valuesPath, i), depth + 1)));
    }
    case 'error': {
      checkKeys(json, path, type, ['name', 'message'], ['cause']);
      const name = expectString(json, 'name', path);
      const message = expectString(json, 'message', path);
      const Ctor = Object.hasOwn(ERROR_CLASSES, name) ? (ERROR_CLASSES[name] as ErrorConstructor) : Error;
      const err = Object.hasOwn(json, 'cause')
        ? new Ctor(message, { cause: fromJson(json.cause, childPath(path, 'cause'), depth + 1) })
        : new Ctor(message);
      if (err.name !== name) err.name = name;
      return err;
    }
    case 'regexp': {
      checkKeys(json, path, type, ['source', 'flags']);
      const source = expectString(json, 'source', path);
      const flags = expectString(json, 'flags', path);
      try {
        return new RegExp(source, flags);
      } catch (e) {
        throw importError(path, `invalid regular expression (${(e as Error).message})`);
      }
    }
    case 'ext': {
      checkKeys(json, path, type, ['name', 'value']);
      const name = json.name;
      if (typeof name !== 'string') throw importError(childPath(path, 'name'), `expected a string, found ${describe(name)}`);
      const t = tapeTypeNamed(name);
      if (!t) {
        throw new TapedeckError('E_TAPE_TYPE', `Import: ${path} holds a "${name}" value, and no class is registered under that name.`, {
          path,
          hint: `Call registerTapeType({ name: '${name}', ... }) before importing, as the program that wrote the tape did.`,
        });
      }
      return t.read(fromJson(json.value, childPath(path, 'value'), depth + 1));
    }
    case 'object': {
      checkKeys(json, path, type, ['value']);
      const valuePath = childPath(path, 'value');
      if (!isJsonObject(json.value)) throw importError(valuePath, `expected an object, found ${describe(json.value)}`);
      if (!Object.hasOwn(json.value, '$type')) throw importError(valuePath, 'an escaped object without a "$type" key (write it unescaped)');
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(json.value)) setKey(out, k, fromJson(json.value[k], childPath(valuePath, k), depth + 2));
      return out;
    }
    default: {
      if (!isTypedArrayName(type)) throw importError(childPath(path, '$type'), `unknown "$type" ${JSON.stringify(type)}`);
      checkKeys(json, path, type, ['base64']);
      const b = decodeBase64(json, path);
      const Ctor = TYPED_ARRAYS[type];
      if (b.byteLength % Ctor.BYTES_PER_ELEMENT !== 0) {
        throw importError(childPath(path, 'base64'), `${b.byteLength} bytes is not a whole number of ${type} elements (${Ctor.BYTES_PER_ELEMENT} bytes each)`);
      }
      const copy = new ArrayBuffer(b.byteLength);
      new Uint8Array(copy).set(b);
      return new Ctor(copy);
    }
  }
}

/** Check the document's shape; returns the header metadata and the decoded record values. */
function parseDocument(json: string): { created: string; tapedeckVersion: string; values: unknown[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw importError('$', `invalid JSON (${(e as Error).message})`);
  }
  if (!isJsonObject(doc)) throw importError('$', `expected an object, found ${describe(doc)}`);
  for (const k of Object.keys(doc)) {
    if (k !== 'header' && k !== 'records' && k !== 'warnings') throw importError(childPath('$', k), `unexpected key "${k}"`);
  }
  const header = doc.header;
  if (!isJsonObject(header)) throw importError('$.header', `expected an object, found ${describe(header)}`);
  if (header.formatVersion !== TAPE_FORMAT_VERSION) {
    throw importError('$.header.formatVersion', `expected format version ${TAPE_FORMAT_VERSION}, found ${describe(header.formatVersion)}`);
  }
  const created = expectString(header, 'created', '$.header');
  const tapedeckVersion = expectString(header, 'tapedeckVersion', '$.header');
  for (const k of Object.keys(header)) {
    if (k !== 'formatVersion' && k !== 'created' && k !== 'tapedeckVersion') {
      throw importError(childPath('$.header', k), `header field "${k}" cannot be written (tapes store only created and tapedeckVersion)`);
    }
  }
  if (!Array.isArray(doc.records)) throw importError('$.records', `expected an array, found ${describe(doc.records)}`);
  if (Object.hasOwn(doc, 'warnings') && !Array.isArray(doc.warnings)) {
    throw importError('$.warnings', `expected an array, found ${describe(doc.warnings)}`);
  }
  const values = doc.records.map((r: unknown, i) => fromJson(r, `$.records[${i}]`, 1));
  return { created, tapedeckVersion, values };
}

/**
 * Read JSON written by {@link exportTapeJSON} and write a new tape at `out` with the same header
 * fields and the same records in order. The whole document is checked before anything is
 * written; malformed input throws `E_TAPE_IMPORT` naming the JSON path of the problem (such as
 * `$.records[3].value.entries[0]`). The tape is built next to `out` and moved into place, so
 * `out` never holds a partial tape; an existing `out` is refused with `E_TAPE_EXISTS` unless
 * `{ force: true }`, which replaces it atomically.
 */
export async function importTapeJSON(json: string, out: string, opts: { force?: boolean } = {}): Promise<{ records: number }> {
  const { created, tapedeckVersion, values } = parseDocument(json);
  const tmp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.import.tmp`);
  try {
    await createTape(tmp, { created, tapedeckVersion });
    // Records come back in the field order writers use (record-order.ts), so a tape written
    // by tapedeck survives export -> import byte for byte.
    if (values.length > 0) await appendRecords(tmp, values.map(inRecordOrder));
    if (opts.force) {
      try {
        await rename(tmp, out);
      } catch (e) {
        throw new TapedeckError('E_TAPE_IO', `Tape ${out}: moving the imported tape into place failed: ${(e as Error).message}`, { file: out });
      }
    } else {
      try {
        await link(tmp, out); // fails with EEXIST instead of replacing
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new TapedeckError('E_TAPE_EXISTS', `Tape ${out} already exists; importTapeJSON does not overwrite it.`, {
            file: out,
            hint: 'Pass { force: true } to replace it, or import to another path.',
          });
        }
        throw new TapedeckError('E_TAPE_IO', `Tape ${out}: moving the imported tape into place failed: ${(e as Error).message}`, { file: out });
      }
      await unlink(tmp);
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
  return { records: values.length };
}
