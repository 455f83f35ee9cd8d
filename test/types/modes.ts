// Checked by tsc (test/types/tsconfig.json, run by test/types/types.test.ts), never executed: a
// misspelt mode is a type error in every entry point, a valid one is not.
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { openTestTape } from '../../src/testing/session.ts';
import type { TapeMode } from '../../src/store/mode.ts';

export function modes(): void {
  // @ts-expect-error 'recrod' is not a tape mode
  createFetch({ tape: 'a.tape', mode: 'recrod' });
  // @ts-expect-error 'recrod' is not a tape mode
  void ReplayCache.open('a.tape', { mode: 'recrod' });
  // @ts-expect-error 'recrod' is not a tape mode
  openTestTape({ tape: 'a.tape', mode: 'recrod' });
  // @ts-expect-error a plain string is not a tape mode either: check it first
  createFetch({ tape: 'a.tape', mode: String(process.env.TAPEDECK_MODE) });

  for (const mode of ['replay', 'record', 'update', 'passthrough', 'once'] as const) {
    const m: TapeMode = mode;
    createFetch({ tape: 'a.tape', mode: m });
    void ReplayCache.open('a.tape', { mode: m });
    openTestTape({ tape: 'a.tape', mode: m });
  }
}
