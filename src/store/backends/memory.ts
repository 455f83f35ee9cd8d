/**
 * The in-memory backend: records in an array, for tests and for the browser (no file system).
 * Values are copied with structuredClone on the way in and out, so what a caller later does to
 * an object it appended (or got back) never changes the store, just as with a file.
 * Several collections opened on one MemoryBackend share it like processes share a tape.
 */
import { TapedeckError } from '../../errors.ts';
import { newRedactionSalt } from '../salt.ts';
import { isRedactionSalt } from '../tape-codec.ts';
import { checkOptionNames, optionNames } from '../../option-names.ts';
import { headOf, type LoadedRecord, type LoadResult, type RecordBackend, type RewriteSelect, type StoreWarning, type WriterHandle } from '../backend.ts';

let counter = 0;

/** Options of {@link MemoryBackend}. */
export interface MemoryBackendOptions {
  /** Names the store in messages: `memory:<name>`. */
  name?: string;
  /** The records it starts with (it exists then, so replay serves them). */
  records?: readonly unknown[];
  /** The redaction salt of the tape the records came from (32 hex digits; default a new one). */
  salt?: string;
}

const MEMORY_OPTIONS = optionNames<MemoryBackendOptions>()(['name', 'records', 'salt']);

/**
 * A RecordBackend in memory: records given up front (a JSON export) or recorded by the run, gone
 * with the process.
 *
 * @example
 * const backend = new MemoryBackend({ name: 'chat', records: recordsFromAJsonExport });
 * const col = await RecordCollection.open(backend, { mode: 'replay', kind: httpRecords() });
 */
export class MemoryBackend implements RecordBackend {
  readonly location: string;
  private exists: boolean;
  private readonly items: { id: number; value: unknown }[] = [];
  private seq = 0;
  /** Open writers per run (collections sharing this backend are the "processes"). */
  private readonly writers = new Map<string, number>();

  readonly salt: string | undefined;

  /** `salt`: the redaction salt of the tape the records came from (default a new one). */
  constructor(opts: MemoryBackendOptions = {}) {
    // A misspelt option was dropped without a word (docs/api.md: option names are checked).
    checkOptionNames(opts, MEMORY_OPTIONS, 'MemoryBackend', 'docs/store-backends.md');
    if (opts.salt !== undefined && !isRedactionSalt(opts.salt)) {
      throw new TapedeckError('E_ARG', `Invalid MemoryBackend salt ${JSON.stringify(opts.salt)}: a redaction salt is 32 lowercase hex digits.`, {
        option: 'salt',
        hint: "Give the salt of the tape the records came from (its header's salt), or leave it out for a new one.",
      });
    }
    this.location = `memory:${opts.name ?? String(++counter)}`;
    this.salt = opts.salt ?? newRedactionSalt();
    this.exists = opts.records !== undefined;
    for (const v of opts.records ?? []) this.items.push({ id: this.seq++, value: copy(v, this.location) });
  }

  private view(item: { id: number; value: unknown }, at: number): LoadedRecord {
    return {
      at,
      head: (_fields?: readonly string[], deep?: boolean) => headOf(item.value, deep),
      value: () => copy(item.value, this.location),
      id: () => `${item.id}`,
    };
  }

  async load(opts: { create: boolean }): Promise<LoadResult> {
    if (opts.create) this.exists = true;
    if (!this.exists) return { exists: false, records: [], warnings: [] };
    return { exists: true, records: this.items.map((it, i) => this.view(it, i)), warnings: [] };
  }

  async append(values: readonly unknown[]): Promise<void> {
    if (!this.exists) throw new TapedeckError('E_TAPE_NOT_FOUND', `${this.location} does not exist.`, { file: this.location, hint: 'Open it in record or update mode first.' });
    // Copy all first: a value that cannot be stored fails the whole append, writing nothing.
    const copies = values.map((v) => copy(v, this.location));
    for (const value of copies) this.items.push({ id: this.seq++, value });
  }

  async rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[]; warnings: StoreWarning[] }> {
    const drop = new Set(select(this.items.map((it, i) => this.view(it, i))));
    const removed: unknown[] = [];
    const kept = this.items.filter((it, i) => (drop.has(i) ? (removed.push(it.value), false) : true));
    this.items.splice(0, this.items.length, ...kept);
    return { kept: kept.length, removed, warnings: [] };
  }

  async openWriter(run: string): Promise<WriterHandle> {
    this.writers.set(run, (this.writers.get(run) ?? 0) + 1);
    let open = true;
    return {
      live: new Set(this.writers.keys()),
      release: async () => {
        if (!open) return;
        open = false;
        const n = (this.writers.get(run) ?? 1) - 1;
        if (n > 0) this.writers.set(run, n);
        else this.writers.delete(run);
      },
    };
  }

  async close(): Promise<void> {}
}

function copy(v: unknown, location: string): unknown {
  try {
    return structuredClone(v);
  } catch (e) {
    throw new TapedeckError('E_TYPE', `A record for ${location} cannot be stored: ${(e as Error).message}`, {
      file: location,
      hint: 'Records must be plain data: objects, arrays, strings, numbers, booleans, null, bigint, Date, Map, Set, typed arrays.',
    });
  }
}
