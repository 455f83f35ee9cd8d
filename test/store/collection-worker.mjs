// Child process for test/store/collection.test.ts: a writer on a shared tape through the
// recording collection. argv: <dist dir url> <tape> <mode> <writer id> <n>
//   record    open in record mode, append n records { key: `<id>-<i>` } one at a time, close
//   ack       like record, printing each i once its append resolved (for kill -9), never closing
const [distUrl, tape, mode, id, nText] = process.argv.slice(2);
const { RecordCollection } = await import(new URL('store/collection.js', distUrl));
const { TapeBackend } = await import(new URL('store/backends/tape.js', distUrl));
const n = Number(nText);
const kind = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  is: (v) => v !== null && typeof v === 'object' && typeof v.key === 'string',
};
const col = await RecordCollection.open(new TapeBackend(tape), { mode: 'record', kind });
for (let i = 0; i < n; i++) {
  await col.append(`${id}-${i}`, { v: 1, key: `${id}-${i}`, writer: id, i, pad: 'x'.repeat((i * 37) % 500) });
  if (mode === 'ack') process.stdout.write(`${i}\n`);
}
if (mode === 'record') await col.close();
