// Two tests whose names differ only by characters a tape name cannot hold (`says hello!` and
// `says hello?`) share one tape, and on a shared Redis store one namespace: the second was served
// the first one's recording, silently, though docs/vitest.md says tests never share recordings by
// accident. Existing tapes keep their names (renaming them would lose users' recordings); the
// collision is now told, naming both tests, the tape, and how to tell them apart.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultTapePath } from '../../src/testing/names.ts';

afterEach(() => vi.restoreAllMocks());

describe('two tests of one file named alike', () => {
  it('are warned about: they share one tape', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const file = '/p/test/names-collide.test.ts';
    const a = defaultTapePath({ file, names: ['greets', 'says hello!'], root: '/p' });
    // The same test again (a retry, a repeat) is no collision.
    expect(defaultTapePath({ file, names: ['greets', 'says hello!'], root: '/p' })).toBe(a);
    expect(warn).not.toHaveBeenCalled();
    const b = defaultTapePath({ file, names: ['greets', 'says hello?'], root: '/p' });
    expect(b).toBe(a);
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, opts] = warn.mock.calls[0]! as [string, { code?: string }];
    expect(message).toContain('"greets > says hello!"');
    expect(message).toContain('"greets > says hello?"');
    expect(message).toContain(a);
    expect(message).toMatch(/rename/i);
    expect(opts.code).toBe('TAPEDECK_TAPE_NAME');
  });

  it('tests whose names map to different tapes are not warned about', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const file = '/p/test/names-distinct.test.ts';
    defaultTapePath({ file, names: ['says hello'], root: '/p' });
    defaultTapePath({ file, names: ['says goodbye'], root: '/p' });
    expect(warn).not.toHaveBeenCalled();
  });
});
