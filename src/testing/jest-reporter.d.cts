// Types of the CommonJS bundle of llm-tapedeck/jest/reporter.
declare class TapedeckJestReporter {
  constructor(globalConfig?: unknown, options?: { testCommand?: string });
  onRunComplete(contexts?: unknown, results?: unknown): Promise<void>;
  getLastError(): Error | undefined;
}
declare namespace TapedeckJestReporter {}
export = TapedeckJestReporter;
