// Shared test helpers that need tapedeck itself (reference.ts stays free of it).
import { TapedeckError } from '../src/index.ts';

/** The TapedeckError `f` throws; fails the test if it throws something else or nothing. */
export function errorOf(f: () => unknown): TapedeckError {
  try {
    f();
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw new Error(`expected a TapedeckError, got ${String(e)}`);
  }
  throw new Error('expected an error, got none');
}

/** The TapedeckError a promise rejects with; fails the test on anything else. */
export async function rejectionOf(p: Promise<unknown>): Promise<TapedeckError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw new Error(`expected a TapedeckError, got ${String(e)}`);
  }
  throw new Error('expected a rejection, got none');
}
