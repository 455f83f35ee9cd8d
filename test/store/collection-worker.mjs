// Child process for test/store/collection.test.ts: a writer on a shared tape through the
// recording collection. argv: <dist dir url> <tape> <mode> <writer id> <n> [run]
//   record    open in record mode, append n records { key: `<id>-<i>` } one at a time, close
//   ack       like record, printing each i once its append resolved (for kill -9), never closing
//   same      like record, but every record under the one key `same`
//   hold      like same, then print `held` and stay open until killed
// With [run], the writer belongs to that run (the workers of one test run share one).
const [distUrl, tape, mode, id, nText, run] = process.argv.slice(2);
const { RecordCollection } = await import(new URL('store/collection.js', distUrl));
const { TapeBackend } = await import(new URL('store/backends/tape.js', distUrl));
const n = Number(nText);
const kind = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  is: (v) => v !== null && typeof v === 'object' && typeof v.key === 'string',
};
const col = await RecordCollection.open(new TapeBackend(tape), { mode: 'record', kind, ...(run ? { run } : {}) });
const oneKey = mode === 'same' || mode === 'hold';
for (let i = 0; i < n; i++) {
  const key = oneKey ? 'same' : `${id}-${i}`;
  await col.append(key, { v: 1, key, writer: id, i, pad: 'x'.repeat((i * 37) % 500) });
  if (mode === 'ack') process.stdout.write(`${i}\n`);
}
if (mode === 'record' || mode === 'same') await col.close();
if (mode === 'hold') {
  process.stdout.write('held\n');
  setInterval(() => {}, 1000);
}
