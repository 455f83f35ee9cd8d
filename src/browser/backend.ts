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
  /** Known once `load` resolved, as the interface allows. */
  salt: string | undefined;
  private readonly tape: LoadedTape | Promise<LoadedTape>;

  /**
   * `tape` may be still loading (a service worker's, loaded by URL): `load` waits for it, and a
   * tape that failed to load fails the open, which answers every request with its error.
   * `location` names it in messages meanwhile (its URL).
   */
  constructor(tape: LoadedTape | Promise<LoadedTape>, location: string) {
    this.tape = tape;
    this.location = location;
  }

  async load(): Promise<LoadResult> {
    const tape = await this.tape;
    if (isRedactionSalt(tape.header.salt)) this.salt = tape.header.salt;
    const records: LoadedRecord[] = tape.records.map(({ offset, value }, i) => ({
      at: offset,
      head: () => headOf(value),
      // Each caller gets its own copy: the collection may keep what it is given.
      value: () => structuredClone(value),
      id: () => String(i),
    }));
    const warnings: StoreWarning[] = tape.warnings.map((w) => ({ code: w.code, offset: w.offset, message: w.message }));
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
