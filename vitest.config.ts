import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The API suite runs once per backend (TAPEDECK_BACKEND), so all three are held to the same
// results. Tests that drive a wasm build directly run once: they instantiate both builds
// themselves.
const direct = [
  'test/number.test.ts',
  'test/sha256-wasm.test.ts',
  'test/utf16-wasm.test.ts',
  'test/walk-wasm.test.ts',
  'test/walk-room.test.ts',
  'test/view-wasm.test.ts',
  'test/build.test.ts',
  'test/parity.test.ts',
  'test/escape-scan.test.ts',
  // Reads source files only: no backend involved.
  'test/imports.test.ts',
  // The bench's own report over several runs: no backend involved.
  'test/bench-spread.test.ts',
  // The tape file format does no hashing: running it per backend would only triple its
  // multi-process tests.
  'test/store/**/*.test.ts',
  // The tree and replay store only call the public core API, which the per-backend suites
  // already hold to identical results.
  'test/tree/**/*.test.ts',
  // Drift reports read tapes through the public core API, like the tree.
  'test/drift/**/*.test.ts',
  'test/replay/**/*.test.ts',
  // The proxy is transport around the matcher, which the per-backend suites already cover.
  'test/proxy/**/*.test.ts',
  // Provider wire formats and SDK round trips through the proxy: transport, like the proxy's.
  'test/providers/**/*.test.ts',
  // The browser suite compares every backend in the page with Node itself.
  'test/browser/**/*.test.ts',
  // The test-runner integration drives the proxy and vitest itself.
  'test/vitest/**/*.test.ts',
  // The packed tarball and the CLI as a user meets them: nothing backend-specific.
  'test/package/**/*.test.ts',
  'test/cli/**/*.test.ts',
  // tsc over the type tests: types do not depend on a backend.
  'test/types/**/*.test.ts',
  // Real redis-server processes: once is enough, the core is not what they test.
  'test/redis/**/*.test.ts',
  // Real MCP servers and clients: the engine under them is tested once.
  'test/mcp/**/*.test.ts',
  // Realtime sessions over real WebSockets: the engine under them is tested once.
  'test/realtime/**/*.test.ts',
  // Faults on demand through createFetch, the proxy and test tapes: transport, like the proxy's.
  'test/chaos/**/*.test.ts',
];

/** The SDK's deprecation notice for a model name the tests use as data (see test/setup.ts). */
const SDK_DEPRECATION = /is deprecated and will reach end-of-life|Please migrate to a newer model/;
const common = { setupFiles: ['test/setup.ts'] };

export default defineConfig({
  test: {
    // One fresh temp directory for the run; a test that leaves a tapedeck-* folder fails it.
    globalSetup: ['test/temp-dir.ts'],
    // Two test files at a time even on two cores (vitest's default there is one): most of the
    // run's time is spent in files that wait on child processes (vitest, jest and mocha runs,
    // redis-server, MCP servers, Chromium), so a second file uses the CPU the first leaves idle.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    onConsoleLog: (log: string) => (SDK_DEPRECATION.test(log) ? false : undefined),
    projects: [
      ...(['wasm-simd', 'wasm', 'js'] as const).map((backend) => ({
        test: {
          ...common,
          name: backend,
          include: ['test/**/*.test.ts'],
          exclude: direct,
          env: { TAPEDECK_BACKEND: backend },
          testTimeout: 60_000,
        },
      })),
      { test: { ...common, name: 'wasm-direct', include: direct, testTimeout: 120_000 } },
    ],
  },
});
