// Child process for test/store/create-race.test.ts: a recorder that opens a tape when told to,
// so that several of them open the same new tape at the same moment. argv: <dist dir url> <run>
// Prints `ready` once loaded; then for each line `<tape>` on stdin it opens the tape in record
// mode (one run shared by all the workers, so none replaces another's record), appends one
// record, closes it and prints one JSON line: { warnings } (the codes and messages the open
// reported).
import { createInterface } from 'node:readline';

const [distUrl, run] = process.argv.slice(2);
const { RecordCollection } = await import(new URL('store/collection.js', distUrl));
const { TapeBackend } = await import(new URL('store/backends/tape.js', distUrl));
const kind = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  is: (v) => v !== null && typeof v === 'object' && typeof v.key === 'string',
};

process.stdout.write('ready\n');
for await (const tape of createInterface({ input: process.stdin })) {
  try {
    const col = await RecordCollection.open(new TapeBackend(tape), { mode: 'record', kind, run });
    const warnings = col.warnings.map((w) => `${w.code}: ${w.message}`);
    const key = `${process.pid}`;
    await col.append(key, { v: 1, key });
    await col.close();
    process.stdout.write(`${JSON.stringify({ warnings })}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: `${e?.code ?? ''} ${e?.message ?? e}` })}\n`);
  }
}
