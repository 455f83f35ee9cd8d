/**
 * Values of user classes (registerTapeType, tape-file.ts) that the reading process has not
 * registered. On a tape such a value is the tag `D4 <type> 00` followed by what the class's
 * `write()` gave, encoded like any record value, so a reader without the class can still read
 * it: as an {@link UnregisteredTapeValue} holding the type number and that data. The record is
 * intact; calling it damage made every tool (verify, scan, export, the CLI, a teammate's script)
 * report a sound tape as corrupt, and `tapedeck prune` delete it.
 *
 * A tool shows, exports and copies such a value; it writes back the same bytes. A program that is
 * handed a recorded value (a replay) gets E_TAPE_TYPE instead (see {@link refuseUnregistered}):
 * a stand-in where its class was expected would be a wrong answer.
 *
 * Node only: msgpackr's extension table is process-global, and a type is claimed here only once a
 * tape holds it and nothing in the process registered it (msgpackr threw "Unknown extension"), so
 * an extension the program registered with msgpackr itself is never replaced. The browser build
 * reads through msgpackr's own Unpackr (proto-unpackr.browser.ts) and never loads this module.
 */
import { addExtension } from 'msgpackr/pack';
import { TapedeckError } from '../errors.ts';

/**
 * A value of a registerTapeType class this process has not registered: its extension `type`
 * (1 to 63) and the `value` its class's write() gave. Written to a tape again, it is the same
 * bytes; `tapedeck export` writes it as `{ "$type": "ext", "name": "#<type>", "value" }`.
 *
 * @example
 * const price = record.value.price // UnregisteredTapeValue { type: 7, value: ['EUR', 12.5] }
 */
export class UnregisteredTapeValue {
  constructor(
    readonly type: number,
    readonly value: unknown,
  ) {}
}

/** Per type claimed here, the class its values are made of (each writes its own type number). */
const claimed = new Map<number, new (value: unknown) => UnregisteredTapeValue>();

/** The type number of the last value read of a type claimed here (see {@link refuseUnregistered}). */
let lastRead: number | undefined;

/**
 * How the data of a value is prepared for packing: tape-file.ts hands over its Map boxing
 * (a Map in the data must stay a Map), as for a registered class's write(). Set by tape-file.ts
 * (which this module cannot import: the tape decoder loads this one).
 */
let prepare: (data: unknown, type: number) => unknown = (data) => data;

/**
 * Internal: tape-file.ts's Map boxing for the data of values written back.
 *
 * @example
 * prepareUnregisteredWith((data, type) => boxMaps(data, new Set(), [`<type ${type}>`]))
 */
export function prepareUnregisteredWith(fn: (data: unknown, type: number) => unknown): void {
  prepare = fn;
}

/** The class of type `type`'s values, claiming the type in msgpackr's table on first use. */
function classOf(type: number): new (value: unknown) => UnregisteredTapeValue {
  let C = claimed.get(type);
  if (C) return C;
  C = class extends UnregisteredTapeValue {
    constructor(value: unknown) {
      super(type, value);
    }
  };
  const made = C;
  claimed.set(type, made);
  addExtension({
    Class: made,
    type,
    write: (v: UnregisteredTapeValue) => prepare(v.value, type),
    read: (data: unknown) => {
      lastRead = type;
      return new made(data);
    },
  });
  return made;
}

/**
 * Internal (proto-unpackr.ts): after msgpackr's decoder threw `e`, whether it was a user type
 * (1 to 63) no class is registered for, now claimed, so that decoding again reads it.
 *
 * @example
 * try { v = unpackr.unpack(bytes) } catch (e) { if (!claimUnknownType(e)) throw e; v = unpackr.unpack(bytes) }
 */
export function claimUnknownType(e: unknown): boolean {
  const m = e instanceof Error ? /^Unknown extension (\d+)$/.exec(e.message) : null;
  const type = m ? Number(m[1]) : 0;
  if (!(type >= 1 && type <= 63) || claimed.has(type)) return false;
  classOf(type);
  return true;
}

/**
 * A value of type `type` made of `data` (an import of `{ "$type": "ext", "name": "#7" }` without
 * the class registered): written to a tape, the bytes the class's own writer wrote.
 *
 * @example
 * unregisteredValue(7, ['EUR', 12.5]) // packs as D4 07 00 92 A3 "EUR" CB …
 */
export function unregisteredValue(type: number, data: unknown): UnregisteredTapeValue {
  return new (classOf(type))(data);
}

/**
 * Runs `decode` for a value handed to the program (a replay): E_TAPE_TYPE when what it read
 * holds a type no class is registered for in this process. `where` names the record
 * (`chat.tape: the record at byte 113`).
 *
 * @example
 * const value = refuseUnregistered(() => decodeFrame(bytes, frame, file), `${file}: the record at byte ${frame.offset}`)
 */
export function refuseUnregistered<T>(decode: () => T, where: string, details: Record<string, unknown> = {}): T {
  lastRead = undefined;
  const value = decode();
  const type = lastRead;
  if (type === undefined) return value;
  lastRead = undefined;
  throw new TapedeckError('E_TAPE_TYPE', `${where} holds a value of tape type ${type}, and no class is registered for type ${type} in this process.`, {
    ...details,
    type,
    hint: `Call registerTapeType({ type: ${type}, name, Class, write, read }) before opening the tape, as the program that recorded it did.`,
  });
}
