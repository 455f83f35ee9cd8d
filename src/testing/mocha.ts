/**
 * llm-tapedeck/mocha: a tape per mocha test, and the run summary at the end, in one line:
 *
 * ```js
 * // .mocharc.json: { "require": ["llm-tapedeck/mocha"] }   or   mocha --require llm-tapedeck/mocha
 * ```
 *
 * Each test gets `__tapes__/<file>/<suite>/<test>.tape` beside its file; `tape()` (or
 * `this.tape` in a `function () {}` test) is the running test's tape. docs/vitest.md.
 *
 * @example
 * import { tape } from 'llm-tapedeck/mocha'
 * it('says hello', async () => {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape().fetch })
 * })
 */
import { beginTest, endRun, endTest, startRun } from './runner.ts';

export { configureTapes, tape, type RunnerTapeOptions } from './runner.ts';

interface MochaContext {
  currentTest?: { file?: string; titlePath(): string[] };
  tape?: unknown;
}

/** Root hooks (mocha's --require plugin): open the test's tape before it, close it after. */
export const mochaHooks = {
  beforeEach(this: MochaContext): void {
    const t = this.currentTest;
    this.tape = beginTest({ file: t?.file ?? 'unknown.test.js', names: t ? t.titlePath() : ['test'], runner: 'mocha' });
  },
  async afterEach(this: MochaContext): Promise<void> {
    this.tape = undefined;
    await endTest();
  },
};

let runDir: string | undefined;

/** Global fixture: the run directory, made before any test (and worker) starts. */
export function mochaGlobalSetup(): void {
  runDir = startRun();
}

/** Global fixture: the run summary. */
export async function mochaGlobalTeardown(): Promise<void> {
  if (runDir) await endRun(runDir, 'npx mocha');
}
