/**
 * A tape loaded by a page, as a read-only backend of the recording collection: the records in
 * tape order, each at the byte offset it had in the file, so messages and miss diagnostics name a
 * recording exactly as Node does (`chat.tape@1234`). Writing is Node's job.
 */
import { TapedeckError } from '../errors.ts';
import { headOf, type LoadedRecord, type LoadResult, type RecordBackend, type StoreWarning } from '../store/backend.ts';
import { isRedactionSalt } from '../store/tape-codec.ts';
import type { LoadedTape } from './load.ts';

function readOnly(location: string, what: string): never {
  throw new TapedeckError('E_MODE', `${location} is a tape loaded in the page: it cannot be ${what}.`, {
    file: location,
    hint: "Replay it with mode 'replay' (or 'passthrough'); record tapes in Node with createFetch or tapedeck serve.",
  });
}

export class LoadedTapeBackend implements RecordBackend {
  readonly location: string;
  readonly salt: string | undefined;
  private readonly tape: LoadedTape;

  constructor(tape: LoadedTape) {
    this.tape = tape;
    this.location = tape.name;
    this.salt = isRedactionSalt(tape.header.salt) ? tape.header.salt : undefined;
  }

  async load(): Promise<LoadResult> {
    const records: LoadedRecord[] = this.tape.records.map(({ offset, value }, i) => ({
      at: offset,
      head: () => headOf(value),
      // Each caller gets its own copy: the collection may keep what it is given.
      value: () => structuredClone(value),
      id: () => String(i),
    }));
    const warnings: StoreWarning[] = this.tape.warnings.map((w) => ({ code: w.code, offset: w.offset, message: w.message }));
    return { exists: true, records, warnings };
  }

  async append(): Promise<void> {
    readOnly(this.location, 'appended to');
  }

  async rewrite(): Promise<never> {
    readOnly(this.location, 'rewritten');
  }

  async close(): Promise<void> {}
}
