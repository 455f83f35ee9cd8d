/**
 * llm-tapedeck/jest/reporter: the run summary after a jest run (tapes written, recordings
 * added, misses with their record commands, unused recordings), as the vitest plugin prints it.
 *
 * ```js
 * reporters: ['default', 'llm-tapedeck/jest/reporter']
 * ```
 */
import { endRun, startRun } from './runner.ts';

/**
 * A jest reporter. Made before jest starts its workers, it sets the run directory they report
 * into (TAPEDECK_RUN_DIR); when the run completes it prints the summary.
 *
 * @example
 * // jest.config.js
 * module.exports = { reporters: ['default', 'llm-tapedeck/jest/reporter'] }
 */
export default class TapedeckJestReporter {
  private readonly runDir: string;
  constructor(_globalConfig?: unknown, private readonly options: { testCommand?: string } = {}) {
    this.runDir = startRun();
  }

  async onRunComplete(): Promise<void> {
    await endRun(this.runDir, this.options.testCommand ?? 'npx jest');
  }
}
