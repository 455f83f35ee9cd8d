// Child process for test/store/tape-file.test.ts: a second writer on the same tape.
// argv: <module url of a tape-file build> <tape path> <mode> <worker id> <n>
//   append       append n records { worker, seq } one appendRecords call each
//   append-report  like append, printing each seq once its append has resolved (for kill -9)
//   hold-append  take the tape lock, print "locked", wait n ms, append one record, release
const [moduleUrl, tape, mode, worker, nText] = process.argv.slice(2);
const { appendRecords, withTapeLock } = await import(moduleUrl);
const n = Number(nText);

if (mode === 'append' || mode === 'append-report') {
  for (let seq = 0; seq < n; seq++) {
    await appendRecords(tape, [{ worker, seq, pad: 'x'.repeat(seq % 300) }]);
    if (mode === 'append-report') process.stdout.write(`${seq}\n`);
  }
} else if (mode === 'hold-append') {
  await withTapeLock(tape, async (lock) => {
    process.stdout.write('locked\n');
    await new Promise((r) => setTimeout(r, n));
    await appendRecords(tape, [{ worker, seq: 0, late: true }], { lock });
  });
} else {
  throw new Error(`unknown mode ${mode}`);
}
