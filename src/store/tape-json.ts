/**
 * The JSON form of a tape (see export.ts for the format table), read back without Node built-ins:
 * `tapedeck import` and the browser entry decode exported tapes with this one reader. The
 * helpers both directions share live here too.
 */
import { TapedeckError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { isRedactionSalt, TAPE_FORMAT_VERSION } from './tape-codec.ts';

/** A class registered with registerTapeType, found by its name. */
export type TypeLookup = (name: string) => { read(data: unknown): object } | undefined;

/** Deepest nesting exported or imported; deeper data would risk the call stack. */
export const MAX_NESTING = 2000;

export const TYPED_ARRAYS = {
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
export type TypedArrayName = keyof typeof TYPED_ARRAYS;
export const isTypedArrayName = (s: string): s is TypedArrayName => Object.hasOwn(TYPED_ARRAYS, s);

export const SPECIAL_NUMBERS = new Map<string, number>([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
]);

export const ERROR_CLASSES: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** `$.a.b`, `$["odd key"]`, `$[3]`. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Bytes of standard base64 text, or undefined if it is not base64 (Buffer where there is one). */
export function base64Bytes(s: string): Uint8Array | undefined {
  if (typeof Buffer !== 'undefined') return Buffer.from(s, 'base64');
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    return undefined;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Standard base64 of bytes (Buffer where there is one). */
export function base64Text(b: Uint8Array): string {
  if (typeof Buffer !== 'undefined') return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  let bin = '';
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(bin);
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
  // A member the document does not have (JSON has no undefined value to find).
  if (v === undefined) return 'nothing (the field is missing)';
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

function decodeBase64(obj: Record<string, unknown>, path: string): Uint8Array {
  const s = expectString(obj, 'base64', path);
  const bytes = base64Bytes(s);
  if (bytes === undefined || base64Text(bytes) !== s) throw importError(childPath(path, 'base64'), 'invalid or non-canonical base64');
  return bytes;
}

function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty so a "__proto__" key stays data, never a prototype change.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function fromJson(json: unknown, path: string, depth: number, named: TypeLookup): unknown {
  if (depth > MAX_NESTING) throw importError(path, `nesting deeper than ${MAX_NESTING} levels`);
  if (json === null || typeof json === 'string' || typeof json === 'boolean' || typeof json === 'number') return json;
  if (Array.isArray(json)) return json.map((v, i) => fromJson(v, childPath(path, i), depth + 1, named));
  if (!isJsonObject(json)) throw importError(path, `unexpected ${describe(json)}`);
  if (!Object.hasOwn(json, '$type')) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(json)) setKey(out, k, fromJson(json[k], childPath(path, k), depth + 1, named));
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
    case 'Buffer': {
      checkKeys(json, path, type, ['base64']);
      const b = decodeBase64(json, path);
      // Where there is no Buffer (a browser), the bytes come back as a Uint8Array.
      return typeof Buffer !== 'undefined' ? Buffer.from(b) : b;
    }
    case 'stream':
      throw new TapedeckError('E_TAPE_IMPORT', `Cannot import tape JSON: ${path} is a stream in review form (tapedeck export --review), which is for reading and keeps no bytes.`, {
        path,
        hint: 'Export the tape without --review to get the form that imports: tapedeck export <tape> > tape.json',
      });
    case 'ArrayBuffer':
    case 'DataView': {
      checkKeys(json, path, type, ['base64']);
      const b = decodeBase64(json, path);
      const copy = new ArrayBuffer(b.byteLength);
      new Uint8Array(copy).set(b);
      return type === 'DataView' ? new DataView(copy) : copy;
    }
    case 'map': {
      checkKeys(json, path, type, ['entries']);
      const entriesPath = childPath(path, 'entries');
      if (!Array.isArray(json.entries)) throw importError(entriesPath, `expected an array of [key, value] pairs, found ${describe(json.entries)}`);
      const m = new Map<unknown, unknown>();
      json.entries.forEach((e: unknown, i) => {
        const at = childPath(entriesPath, i);
        if (!Array.isArray(e) || e.length !== 2) throw importError(at, `expected a [key, value] pair, found ${describe(e)}`);
        m.set(fromJson(e[0], childPath(at, 0), depth + 2, named), fromJson(e[1], childPath(at, 1), depth + 2, named));
      });
      return m;
    }
    case 'set': {
      checkKeys(json, path, type, ['values']);
      const valuesPath = childPath(path, 'values');
      if (!Array.isArray(json.values)) throw importError(valuesPath, `expected an array, found ${describe(json.values)}`);
      return new Set(json.values.map((v: unknown, i) => fromJson(v, childPath(valuesPath, i), depth + 1, named)));
    }
    case 'error': {
      checkKeys(json, path, type, ['name', 'message'], ['cause']);
      const name = expectString(json, 'name', path);
      const message = expectString(json, 'message', path);
      const Ctor = Object.hasOwn(ERROR_CLASSES, name) ? (ERROR_CLASSES[name] as ErrorConstructor) : Error;
      const err = Object.hasOwn(json, 'cause')
        ? new Ctor(message, { cause: fromJson(json.cause, childPath(path, 'cause'), depth + 1, named) })
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
      const t = named(name);
      if (!t) {
        throw new TapedeckError('E_TAPE_TYPE', `Import: ${path} holds a "${name}" value, and no class is registered under that name.`, {
          path,
          hint: `Call registerTapeType({ name: '${name}', ... }) before importing, as the program that wrote the tape did.`,
        });
      }
      return t.read(fromJson(json.value, childPath(path, 'value'), depth + 1, named));
    }
    case 'object': {
      checkKeys(json, path, type, ['value']);
      const valuePath = childPath(path, 'value');
      if (!isJsonObject(json.value)) throw importError(valuePath, `expected an object, found ${describe(json.value)}`);
      if (!Object.hasOwn(json.value, '$type')) throw importError(valuePath, 'an escaped object without a "$type" key (write it unescaped)');
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(json.value)) setKey(out, k, fromJson(json.value[k], childPath(valuePath, k), depth + 2, named));
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

/**
 * Checks the document's shape; returns the header metadata and the decoded record values. `named`
 * finds classes registered with registerTapeType (none in a browser).
 *
 * @example
 * const { values } = parseTapeDocument(await (await fetch('/tapes/chat.tape.json')).text());
 */
export function parseTapeDocument(json: string, named: TypeLookup = () => undefined): { created: string; tapedeckVersion: string; salt?: string; more?: Record<string, unknown>; values: unknown[] } {
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
    // A newer format is a newer tapedeck's, as on a binary tape (tape-codec.ts): upgrade.
    if (Number.isInteger(header.formatVersion) && (header.formatVersion as number) > TAPE_FORMAT_VERSION) {
      throw new TapedeckError('E_TAPE_VERSION', `The tape JSON has tape format version ${header.formatVersion as number}; this tapedeck reads up to ${TAPE_FORMAT_VERSION}.`, {
        path: '$.header.formatVersion',
        hint: `It was written by tapedeck ${typeof header.tapedeckVersion === 'string' ? header.tapedeckVersion : 'a newer version'}; upgrade tapedeck to read it.`,
      });
    }
    throw importError('$.header.formatVersion', `expected format version ${TAPE_FORMAT_VERSION}, found ${describe(header.formatVersion)}`);
  }
  let created = expectString(header, 'created', '$.header');
  let tapedeckVersion = expectString(header, 'tapedeckVersion', '$.header');
  // Keys tapedeck does not write (another implementation's): kept, as readers keep them.
  let more: Record<string, unknown> | undefined;
  for (const k of Object.keys(header)) {
    if (!['formatVersion', 'created', 'tapedeckVersion', 'salt', 'headerLost'].includes(k)) setKey((more ??= {}), k, fromJson(header[k], childPath('$.header', k), 2, named));
  }
  if (header.headerLost !== undefined) {
    if (header.headerLost !== true) throw importError('$.header.headerLost', `expected true (or no "headerLost"), found ${describe(header.headerLost)}`);
    // The export of a tape whose header was damaged: its records come back under a fresh
    // header, as `tapedeck prune` writes one (the lost salt cannot come back).
    created = new Date().toISOString();
    tapedeckVersion = VERSION;
  }
  const salt = header.salt;
  if (salt !== undefined && !isRedactionSalt(salt)) throw importError('$.header.salt', `expected 32 lowercase hex digits, found ${describe(salt)}`);
  if (!Array.isArray(doc.records)) throw importError('$.records', `expected an array, found ${describe(doc.records)}`);
  if (Object.hasOwn(doc, 'warnings') && !Array.isArray(doc.warnings)) {
    throw importError('$.warnings', `expected an array, found ${describe(doc.warnings)}`);
  }
  const values = doc.records.map((r: unknown, i) => fromJson(r, `$.records[${i}]`, 1, named));
  // An HTTP recording's status is what its replay answers with: one a Response cannot have
  // (a typo, "abc", 99) is refused here, with its place, not at the first replay.
  values.forEach((v, i) => {
    const status = (v as { kind?: unknown; response?: { status?: unknown } } | null)?.kind === 'http' ? (v as { response?: { status?: unknown } }).response?.status : 200;
    if (!Number.isInteger(status) || (status as number) < 200 || (status as number) > 599) {
      throw importError(`$.records[${i}].response.status`, `expected an HTTP status from 200 to 599, found ${describe(status)}`);
    }
  });
  return { created, tapedeckVersion, ...(salt !== undefined ? { salt } : {}), ...(more ? { more } : {}), values };
}
