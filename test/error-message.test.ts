// An error's message is its own words, then its hint. A message that does not end a sentence
// (a system error's words: "ENOSPC: no space left on device, write") gets a full stop before the
// hint, so the two do not read as one sentence; one that ends a sentence gets nothing more.
import { describe, expect, it } from 'vitest';
import { TapedeckError, withContext } from '../src/errors.ts';

const HINT = 'Check permissions and free disk space.';

describe('TapedeckError message and hint', () => {
  it('ends a message that does not end a sentence before its hint', () => {
    const e = new TapedeckError('E_TAPE_IO', 'Tape a.tape: append failed: ENOSPC: no space left on device, write', { hint: HINT });
    expect(e.message).toBe(`Tape a.tape: append failed: ENOSPC: no space left on device, write. ${HINT}`);
    expect(e.hint).toBe(HINT);
  });

  for (const ended of ['It failed.', 'Is it there?', 'Stop!', 'Misses:', 'Two lines\n']) {
    it(`adds nothing after ${JSON.stringify(ended)}`, () => {
      expect(new TapedeckError('E_ARG', ended, { hint: HINT }).message).toBe(`${ended} ${HINT}`);
    });
  }

  it('leaves a message without a hint as it is', () => {
    expect(new TapedeckError('E_ARG', 'no hint here').message).toBe('no hint here');
  });

  it('keeps one full stop and one hint when context is put in front (withContext)', () => {
    const e = new TapedeckError('E_TAPE_IO', 'append failed: EIO: i/o error, write', { hint: HINT });
    const c = withContext(e, 'a.tape: ', { file: 'a.tape' });
    expect(c.message).toBe(`a.tape: append failed: EIO: i/o error, write. ${HINT}`);
    expect(c.details.file).toBe('a.tape');
  });
});
