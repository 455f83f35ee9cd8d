// Text written a few records' worth at a time: an export makes many small pieces, and a write
// per piece (a stdout write, a promise) costs more than gathering them. Internal to the exports.

/** Text handed to `write` at a time (a few records' worth). */
const WRITE_CHUNK = 64 * 1024;

/**
 * Gathers text and hands it to `write` in pieces of about WRITE_CHUNK characters, awaiting each
 * (a slow reader holds the export back, a failed write stops it); `flush()` hands over the rest.
 *
 * @example
 * const w = chunkedWriter((t) => void process.stdout.write(t))
 * await w.out('{"a":1}'); await w.flush()
 */
export function chunkedWriter(write: (text: string) => void | Promise<void>): { out(text: string): Promise<void>; flush(): Promise<void> } {
  let pending = '';
  return {
    async out(text) {
      pending += text;
      if (pending.length >= WRITE_CHUNK) {
        const t = pending;
        pending = '';
        await write(t);
      }
    },
    async flush() {
      if (pending.length === 0) return;
      const t = pending;
      pending = '';
      await write(t);
    },
  };
}
