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
}
export = tapedeckJest;
