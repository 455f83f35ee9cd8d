// Types of the CommonJS bundle of llm-tapedeck/jest (jest loads setup files as CommonJS).
// The ES module entry's types (jest.d.ts) are the full ones; these name what a test uses.
declare namespace tapedeckJest {
  /** The running test's tape. */
  interface TestTape {
    readonly path: string;
    readonly location: string;
    readonly mode: 'replay' | 'record' | 'update' | 'passthrough' | 'once';
    /** A standard fetch that records and replays through the tape. */
    readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
    /** A ReplayCache on `<tape>.cache.tape` in the same mode. */
    cache(opts?: Record<string, unknown>): Promise<unknown>;
    /** Routes globalThis.fetch through this tape until the test ends. */
    install(opts?: { hosts?: readonly (string | RegExp)[]; blockNetwork?: boolean; allowHosts?: readonly (string | RegExp)[] }): { uninstall(): void };
  }
  /** The running test's tape; throws outside a test. */
  function tape(): TestTape;
  /** Options of the tapes opened from now on (every test tape option, `dir`, `name`, `testCommand`). */
  function configureTapes(options: Record<string, unknown>): void;

  /** Options of openTestTape: `tape` and the other test tape options (docs/vitest.md). */
  interface TestTapeOptions {
    tape: string;
    mode?: TestTape['mode'];
    [option: string]: unknown;
  }
  /** A tape openTestTape opened: close it when its test ends. */
  interface OpenedTestTape extends TestTape {
    /** Closes the tape; rejects with the miss failure when a request had no recording. */
    close(): Promise<unknown>;
  }
  /** Opens a tape in the test itself (test.concurrent starts before beforeEach hooks run). */
  function openTestTape(opts: TestTapeOptions): OpenedTestTape;

  /** Options of createFetch: `tape`, `mode` (default TAPEDECK_MODE, else replay) and the rest of docs/api.md's. */
  interface FetchOptions {
    tape?: string;
    mode?: TestTape['mode'];
    fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
    [option: string]: unknown;
  }
  /** A standard fetch that records and replays through a tape. */
  interface TapedeckFetch {
    (input: string | URL | Request, init?: RequestInit): Promise<Response>;
    readonly ready: Promise<void>;
    /** Writes pending records and closes the tape. */
    close(withinMs?: number): Promise<void>;
  }
  /** A fetch that records and replays through a tape. */
  function createFetch(opts: FetchOptions): TapedeckFetch;

  /** The error tapedeck throws; `code` is stable (docs/api.md, "Errors"). */
  class TapedeckError extends Error {
    constructor(code: string, message: string, details?: Record<string, unknown>);
    readonly code: string;
    readonly offset: number | undefined;
    readonly path: string | undefined;
    readonly hint: string | undefined;
    readonly details: Record<string, unknown>;
  }
}
export = tapedeckJest;
