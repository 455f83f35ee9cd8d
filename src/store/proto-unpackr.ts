/**
 * The tape decoder's msgpackr Unpackr, with members named `__proto__` given back. msgpackr renames
 * such a member `__proto_` (its guard against prototype pollution), so a ReplayCache value made by
 * JSON.parse of model or user text (`{"__proto__": …}` is an own data member there) replayed with
 * a renamed member, `tapedeck export` printed `"__proto_"`, and an import wrote that. Here such a
 * member is set back as an own data member (defineProperty: never a prototype change), in its
 * place among the object's members.
 *
 * A payload holding no `__proto__` key costs one byte search. A renamed member is told from a
 * real `__proto_` one by the bytes: msgpackr writes a short key as a fixstr, so a payload without
 * the key `__proto_` holds no real one, and each `__proto_` decoded there was renamed. A payload
 * holding both keys is left as msgpackr decodes it (a value with both members is not kept apart
 * by msgpackr either). proto-unpackr.browser.ts is msgpackr's own Unpackr: the page bundle has a
 * byte budget.
 *
 * It also reads the values of user classes (registerTapeType) the process has not registered,
 * which msgpackr refuses as an unknown extension (./unregistered-type.ts).
 */
import { Unpackr } from 'msgpackr/unpack';
import { claimUnknownType, UnregisteredTapeValue } from './unregistered-type.ts';

/** The key `__proto__` as msgpack writes it (fixstr of 9 bytes), and the key `__proto_` (8). */
const PROTO_KEY = Buffer.from('\xa9__proto__', 'latin1');
const RENAMED_KEY = Buffer.from('\xa8__proto_', 'latin1');

const isPlain = (v: object): v is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** Renames each `__proto_` member back, in place, keeping member order; walks arrays, Maps and Sets. */
function restore(v: unknown, depth: number): void {
  if (v === null || typeof v !== 'object' || depth > 10_000) return;
  if (Array.isArray(v)) {
    for (const x of v) restore(x, depth + 1);
    return;
  }
  if (v instanceof Map) {
    for (const [k, x] of v) {
      restore(k, depth + 1);
      restore(x, depth + 1);
    }
    return;
  }
  if (v instanceof Set) {
    for (const x of v) restore(x, depth + 1);
    return;
  }
  if (v instanceof Error) {
    if (Object.hasOwn(v, 'cause')) restore(v.cause, depth + 1);
    return;
  }
  if (v instanceof UnregisteredTapeValue) {
    restore(v.value, depth + 1);
    return;
  }
  if (!isPlain(v)) return;
  const keys = Object.keys(v);
  for (const k of keys) restore(v[k], depth + 1);
  if (!Object.hasOwn(v, '__proto_')) return;
  // Removed and set again from the renamed member on, so the member keeps its place.
  const at = keys.indexOf('__proto_');
  const tail = keys.slice(at).map((k) => [k, v[k]] as const);
  for (const [k] of tail) delete v[k];
  for (const [k, x] of tail) Object.defineProperty(v, k === '__proto_' ? '__proto__' : k, { value: x, enumerable: true, writable: true, configurable: true });
}

/**
 * msgpackr's Unpackr whose unpack() gives `__proto__` members back (see the top). Internal to
 * src/store (tape-codec.ts decodes with it).
 *
 * @example
 * new ProtoUnpackr(MSGPACK_OPTIONS).unpack(payloadOf({ ['__proto__']: 1 })) // an own member "__proto__"
 */
export class ProtoUnpackr extends Unpackr {
  // Spelled out: msgpackr's typings reach TypeScript as `any` here (its ./unpack re-exports '.').
  constructor(options: object) {
    super(options);
  }

  unpack(source: Buffer | Uint8Array, options?: unknown): unknown {
    let v: unknown;
    for (;;) {
      try {
        v = super.unpack(source, options) as unknown;
        break;
      } catch (e) {
        // A user class's value (registerTapeType) this process has not registered: read as a
        // stand-in (./unregistered-type.ts), not called damage. Each type is claimed once.
        if (!claimUnknownType(e)) throw e;
      }
    }
    if (options !== undefined || v === null || typeof v !== 'object') return v;
    const bytes = Buffer.isBuffer(source) ? source : Buffer.from(source.buffer, source.byteOffset, source.byteLength);
    if (bytes.indexOf(PROTO_KEY) < 0 || bytes.indexOf(RENAMED_KEY) >= 0) return v;
    restore(v, 0);
    return v;
  }
}
