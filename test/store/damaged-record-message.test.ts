// A recording whose frame checks out but whose payload does not decode is the damaged one: the
// E_TAPE_DAMAGED its call gets says so, and does not name the damaged record itself as "the next
// intact one" (which read "the next intact one is at 113; damage found at 113").
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { crc32, FRAME_HEADER_SIZE } from '../../src/store/tape-codec.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-damaged-message-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('names no intact recording when the only one does not decode', async () => {
  const tape = join(dir, 'one.tape');
  const question = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  const w = await ReplayCache.open(tape, { mode: 'record' });
  await w.put(question, { answer: undefined });
  await w.close();

  // `undefined` is stored as msgpack's fixext 1 of type 0 (D4 00 00): made a type no tapedeck
  // writes (0x50), with the frame's checksum made to match, the payload no longer decodes.
  const bytes = readFileSync(tape);
  const [record] = (await readTape(tape)).records;
  const payload = bytes.subarray(record!.offset + FRAME_HEADER_SIZE, record!.offset + record!.length);
  const at = payload.indexOf(Buffer.from([0xd4, 0x00, 0x00]));
  expect(at).toBeGreaterThan(0);
  payload[at + 1] = 0x50;
  bytes.writeUInt32BE(crc32(payload), record!.offset + 8);
  writeFileSync(tape, bytes);

  const r = await ReplayCache.open(tape);
  try {
    const err = await r.get(question).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_TAPE_DAMAGED');
    expect((err as TapedeckError).message).toMatch(/^The 1st recording of .* is damaged/);
    expect((err as TapedeckError).message).not.toContain(`next intact one is at ${record!.offset}`);
  } finally {
    await r.close();
  }
});
