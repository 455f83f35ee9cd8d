/**
 * What the plugin hands to the workers through vitest's provide/inject: the run directory for
 * tape reports, the tape mode from `vitest --mode`, the project root and the plugin's store. Type-only: it augments
 * vitest's ProvidedContext so `inject('tapedeck')` is typed on both sides.
 */
export interface ProvidedTapedeck {
  runDir?: string;
  mode?: string;
  root?: string;
  /** The plugin's store option (a Redis URL), for the tests that give none. */
  store?: string;
  /** The command that runs the tests (the plugin's testCommand, or vitest with this run's -c). */
  testCommand?: string;
  /**
   * The id of the current test run, when the plugin names it (not when TAPEDECK_RUN_ID was
   * given): each watch re-run has its own, so its recordings replace the run before's.
   */
  run?: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    tapedeck: ProvidedTapedeck;
  }
}
