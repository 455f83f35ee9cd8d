// Types of the CommonJS bundle of llm-tapedeck/jest/reporter.
declare class TapedeckJestReporter {
  constructor(globalConfig?: unknown, options?: { testCommand?: string });
  onRunComplete(): Promise<void>;
}
declare namespace TapedeckJestReporter {}
export = TapedeckJestReporter;
