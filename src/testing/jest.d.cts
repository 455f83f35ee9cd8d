// Types of the CommonJS bundle of llm-tapedeck/jest (jest loads setup files as CommonJS). They
// are the declarations of the ES module entry (jest.d.ts and the modules it exports from), named
// from this CommonJS file, so that they cannot drift from what the bundle gives: a hand-written
// copy lacked members jest's runtime tape has (chaos(), serve(), mcp(), misses, ...).
// test/package/jest-cjs-types.test.ts compiles a CommonJS project against them.
type Entry = typeof import('./jest.js', { with: { 'resolution-mode': 'import' } });

declare namespace tapedeckJest {
  /** The running test's tape: its fetch, cache(), install(), mcp(), serve(), chaos() (docs/vitest.md). */
  type TestTape = import('./session.js', { with: { 'resolution-mode': 'import' } }).TestTape;
  /** Options of openTestTape: `tape` and the other test tape options (docs/vitest.md). */
  type TestTapeOptions = import('./session.js', { with: { 'resolution-mode': 'import' } }).TestTapeOptions;
  /** A tape openTestTape opened (close it when its test ends): a TestTape. */
  type OpenedTestTape = TestTape;
  /** Options of configureTapes: every test tape option, `dir`, `name`, `testCommand`. */
  type RunnerTapeOptions = import('./runner.js', { with: { 'resolution-mode': 'import' } }).RunnerTapeOptions;
  /** Options of createFetch (docs/api.md). */
  type FetchOptions = import('../proxy/fetch.js', { with: { 'resolution-mode': 'import' } }).FetchOptions;
  /** A standard fetch that records and replays through a tape. */
  type TapedeckFetch = import('../proxy/fetch.js', { with: { 'resolution-mode': 'import' } }).TapedeckFetch;
  /** The stable codes of TapedeckError (docs/api.md, "Errors"). */
  type TapedeckErrorCode = import('../errors.js', { with: { 'resolution-mode': 'import' } }).TapedeckErrorCode;
  /** The error tapedeck throws; `code` is stable (docs/api.md, "Errors"). */
  type TapedeckError = import('../errors.js', { with: { 'resolution-mode': 'import' } }).TapedeckError;

  /** The running test's tape; throws outside a test. */
  const tape: Entry['tape'];
  /** Options of the tapes opened from now on. */
  const configureTapes: Entry['configureTapes'];
  /** Opens a tape in the test itself (test.concurrent starts before beforeEach hooks run). */
  const openTestTape: Entry['openTestTape'];
  /** A fetch that records and replays through a tape. */
  const createFetch: Entry['createFetch'];
  /** The error class tapedeck throws. */
  const TapedeckError: Entry['TapedeckError'];
}
export = tapedeckJest;
