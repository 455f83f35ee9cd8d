// A tape writer paused past its lease (SIGSTOP) keeps its acknowledged recording when another
// record run on the same tape closes meanwhile: on its host a writer is open while its process
// is. A killed one is ended, and its recording is replaced. (test/store/paused-writer.ts)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { answerTexts, LEASE_MS, pausedWriterCase } from './paused-writer.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-paused-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a tape writer paused past its lease', () => {
  for (const how of ['pause', 'kill'] as const) {
    it(how === 'pause' ? 'keeps its acknowledged recording when another record run closes meanwhile' : 'killed instead: its recording is replaced, as a run that ended', async () => {
      const tape = join(dir, `${how}.tape`);
      await pausedWriterCase(
        {
          child: { store: 'tape', target: tape },
          backend: () => new TapeBackend(tape, { lock: { staleMs: LEASE_MS } }),
          answers: async () => answerTexts((await readTape(tape)).records.map((r) => r.value)),
        },
        how,
      );
    }, 30_000);
  }
});
