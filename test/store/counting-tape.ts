// A tape backend that counts how its records are read (decoded whole, one member decoded, a
// member's JSON text made from the stored bytes), and can hide the JSON-text reading, as a
// backend without it has none: the cold-start and miss tests show what a step did not decode.
import type { LoadResult } from '../../src/store/backend.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';

export class CountingTape extends TapeBackend {
  /** Records decoded whole (LoadedRecord.value). */
  decoded = 0;
  /** Members decoded on their own (LoadedRecord.member). */
  members = 0;
  /** JSON texts made from stored bytes (LoadedRecord.json). */
  texts = 0;

  constructor(
    path: string,
    private readonly withJson = true,
  ) {
    super(path);
  }

  override async load(opts: { create: boolean }): Promise<LoadResult> {
    const r = await super.load(opts);
    return {
      ...r,
      records: r.records.map((rec) => {
        const value = rec.value.bind(rec);
        const member = rec.member!.bind(rec);
        const json = rec.json!.bind(rec);
        return Object.assign(Object.create(rec) as typeof rec, {
          value: () => (this.decoded++, value()),
          member: (name: string) => (this.members++, member(name)),
          json: this.withJson ? (path: readonly string[]) => (this.texts++, json(path)) : undefined,
        });
      }),
    };
  }
}
