/**
 * A tape loaded by a page, as a read-only backend of the recording collection: the records in
 * tape order, each at the byte offset it had in the file, so messages and miss diagnostics name a
 * recording exactly as Node does (`chat.tape@1234`). Writing is Node's job.
 */
import { TapedeckError } from '../errors.ts';
import { headOf, type LoadedRecord, type LoadResult, type RecordBackend, type StoreWarning } from '../store/backend.ts';
import { isRedactionSalt } from '../store/tape-codec.ts';
import type { NormalizeOptions } from '../providers/types.ts';
import { keyedAsEdited } from './edited-keys.ts';
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
  private readonly norm: Omit<NormalizeOptions, 'endpoint'>;

  /**
   * `tape` may be still loading (a service worker's, loaded by URL): `load` waits for it, and a
   * tape that failed to load fails the open, which answers every request with its error.
   * `location` names it in messages meanwhile (its URL). `norm`: the replay's key options, which
   * key the requests edited in a JSON form (edited-keys.ts).
   */
  constructor(tape: LoadedTape | Promise<LoadedTape>, location: string, norm: Omit<NormalizeOptions, 'endpoint'> = {}) {
    this.tape = tape;
    this.location = location;
    this.norm = norm;
  }

  async load(): Promise<LoadResult> {
    const tape = await this.tape;
    if (isRedactionSalt(tape.header.salt)) this.salt = tape.header.salt;
    const warnings: StoreWarning[] = tape.warnings.map((w) => ({ code: w.code, offset: w.offset, message: w.message }));
    let rekeyed = 0;
    const records: LoadedRecord[] = tape.records.map(({ offset, value: stored }, i) => {
      // Only the JSON form is edited by hand; a binary tape's keys are the ones it was written with.
      const value = tape.format === 'json' ? keyedAsEdited(stored, this.norm) : stored;
      if (value !== stored) rekeyed++;
      return {
        at: offset,
        head: () => headOf(value),
        // Each caller gets its own copy: the collection may keep what it is given.
        value: () => structuredClone(value),
        id: () => String(i),
      };
    });
    // Once per replay fetch, as `tapedeck import` says it once (src/cli/import.ts).
    if (rekeyed > 0) {
      warnings.push({ code: 'TAPEDECK_REKEY', offset: 0, message: `${tape.name}: ${rekeyed} record(s) edited after export are keyed as their requests now read. Recorded with ignoreArgs, volatileKeys or volatileText? Give createReplayFetch the same.` });
    }
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
