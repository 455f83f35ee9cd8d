/**
 * The test tapes open in this process, in the order they opened. A call made through the fetch
 * of a test whose tape has closed is either one that test did not await, or a client built with
 * that test's fetch that a later test uses again (an SDK that keeps the first client it is
 * given, such as the OpenAI Agents SDK's default provider, or a client kept in a module-level
 * variable). While another test's tape is open, the second is the likely cause, and telling
 * the user to "await every call" sends them looking for a missing await that is not there.
 */

import { TapedeckError } from '../errors.ts';
import { KEPT_CLIENT_WORDS } from './miss.ts';

/** One open test tape: the test's name as the summary shows it. */
export interface OpenTest {
  readonly test: string | undefined;
  /**
   * Told of a call made while this test ran through the fetch of test `from`, which had ended:
   * the call got an error answer the code under test may catch, so this test fails for it (see
   * TestTape.missFailure), with or without a runner's run summary.
   */
  keptCall?(from: string | undefined, route: string): void;
}

const open = new Set<OpenTest>();

/**
 * Registers a test tape as open; the returned function unregisters it (at its close).
 *
 * @example
 * const done = openedTest({ test: 'chat > says hello' }); ...; done();
 */
export function openedTest(t: OpenTest): () => void {
  open.add(t);
  return () => {
    open.delete(t);
  };
}

/**
 * The name of the test most recently opened whose tape is still open, other than `self`:
 * the test running now, in whose time a late call through `self`'s fetch was made.
 *
 * @example
 * runningTestOtherThan(me) // 'test/chat.test.ts > chat > says goodbye'
 */
export function runningTestOtherThan(self: OpenTest): string | undefined {
  const last = runningOtherThan(self);
  return last ? (last.test ?? '(a test)') : undefined;
}

/**
 * The open test tape most recently opened other than `self` (see runningTestOtherThan): the
 * test to fail for a late call through `self`'s fetch. With tests running concurrently in one
 * worker it is the newest of them.
 *
 * @example
 * runningOtherThan(me)?.keptCall?.('chat > says hello', 'POST /v1/chat/completions')
 */
export function runningOtherThan(self: OpenTest): OpenTest | undefined {
  let last: OpenTest | undefined;
  for (const t of open) if (t !== self) last = t;
  return last;
}

/**
 * The answer to a call made through an ended test's fetch while test `running` is open (see
 * lateCallError in src/proxy/fetch.ts for a call with no other test open): no await need be
 * missing, so it says what else makes such a call, and how to build the client per test.
 * Here rather than beside lateCallError, which the browser bundle carries: a page runs no tests.
 *
 * @example
 * keptClientError('chat > says goodbye').code // 'E_PROXY_CLOSED'
 */
export function keptClientError(running: string): TapedeckError {
  return new TapedeckError('E_PROXY_CLOSED', `This request came through the ${KEPT_CLIENT_WORDS} (its tape is closed), while test "${running}" was running: it has no answer. A client made with the earlier test's fetch was used again, or the earlier test did not await this call.`, {
    running,
    hint: "Build the client inside each test from that test's tape.fetch. An SDK that keeps the first client it is given keeps the first test's fetch: with the OpenAI Agents SDK, setDefaultOpenAIClient() has no effect once a run has used the default provider, so pass the client per run instead (new Runner({ modelProvider: new OpenAIProvider({ openAIClient }) })).",
  });
}
