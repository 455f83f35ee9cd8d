/**
 * llm-tapedeck/testing: tapes for tests in any runner (mocha, jest, node:test, vitest), with no
 * dependency on a runner. `openTestTape` gives a test its tape (or, with a Redis store, its own
 * namespace) and a ready fetch; the run summary
 * functions add up what every test's tape did. The vitest fixture (`llm-tapedeck/vitest`) is
 * built on these. docs/vitest.md has the details.
 *
 * @example
 * import { openTestTape } from 'llm-tapedeck/testing'
 * const tape = openTestTape({ tape: 'test/__tapes__/chat/says-hello.tape' })
 * try {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape.fetch })
 *   // ...
 * } finally {
 *   await tape.close()
 * }
 */
export { openTestTape, resolveTestStore, STORE_ENV, type InstallOptions, type TestServeOptions, type TestTape, type TestTapeOptions } from './session.ts';
export { defaultTapePath, slug, testNamespace, type TapeNameInfo, type TapeNamer } from './names.ts';
export { isCI, resolveTestMode, type TestModeSource } from './mode.ts';
export { diagnoseMiss, type MissDetails, type Near } from './miss.ts';
export {
  formatSummary,
  pruneUnused,
  readTapeReports,
  summarizeRun,
  writeTapeReport,
  type FallbackReport,
  type FormatOptions,
  type MissReport,
  type RunSummary,
  type SummaryOptions,
  type TapeReport,
  type TapeSummary,
} from './run-report.ts';
export { tapeTransport, type McpTransportLike, type TapeTransport, type TapeTransportOptions } from '../mcp/transport.ts';
export { installFetchSwitch, type FetchSwitch, type FetchSwitchOptions, type HostPattern } from '../proxy/global-fetch.ts';
