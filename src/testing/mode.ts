/**
 * The tape mode of a test run. Unlike a createFetch option, a mode written in test code is only
 * the project's default: the run's own switches (`vitest --mode update`, `TAPEDECK_MODE`) win,
 * so the record command printed on a miss works whatever the config says.
 *
 * Order: `vitest --mode <tape mode>` (through the plugin), `TAPEDECK_MODE`, `CACHE_MODE`, the
 * `mode` option, then the default: `replay` in CI (`CI`, or a CI system's own variable: see
 * isCI; nothing records in CI unless asked),
 * else `update` (replay what is recorded, record what is missing).
 */
import { TapedeckError } from '../errors.ts';
import { resolveModeWithSource, TAPE_MODES, type TapeMode } from '../store/mode.ts';

/**
 * What decided a test tape's mode (resolveTestMode): vitest's --mode, TAPEDECK_MODE, CACHE_MODE,
 * the option, CI, or the default.
 */
export type TestModeSource = 'vitest --mode' | 'TAPEDECK_MODE' | 'CACHE_MODE' | 'option' | 'CI' | 'default';

// CI systems that do not set `CI` themselves, by the variable each sets in every job: Azure
// Pipelines, Jenkins (and Hudson), TeamCity, AWS CodeBuild, Buildkite, and the older spelling
// some systems use. Without them a job there ran in update mode and called the live API.
const CI_SIGNS = ['TF_BUILD', 'JENKINS_URL', 'HUDSON_URL', 'TEAMCITY_VERSION', 'CODEBUILD_BUILD_ID', 'BUILDKITE', 'CONTINUOUS_INTEGRATION'] as const;

/**
 * Whether the environment says this is a CI run: `CI` set to anything but empty, `0` or
 * `false`, or a CI system's own variable where it sets no `CI` (Azure Pipelines' `TF_BUILD`,
 * Jenkins' `JENKINS_URL`, TeamCity, CodeBuild, Buildkite). `CI=false` (or `0`) says no on any
 * system.
 *
 * @example
 * isCI({ TF_BUILD: 'True' })              // true
 * isCI({ CI: 'false', TF_BUILD: 'True' }) // false
 */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI?.trim().toLowerCase();
  if (v !== undefined && v !== '') return v !== '0' && v !== 'false';
  return CI_SIGNS.some((name) => {
    const x = env[name]?.trim().toLowerCase();
    return x !== undefined && x !== '' && x !== '0' && x !== 'false';
  });
}

/**
 * Resolves the mode of a test run (see the module comment for the order).
 *
 * @example
 * resolveTestMode({ env: { CI: 'true' } })                          // { mode: 'replay', source: 'CI' }
 * resolveTestMode({ env: {} })                                      // { mode: 'update', source: 'default' }
 * resolveTestMode({ option: 'replay', env: { TAPEDECK_MODE: 'record' } }).mode // 'record'
 */
export function resolveTestMode(opts: { option?: string; cliMode?: string; env?: NodeJS.ProcessEnv } = {}): { mode: TapeMode; source: TestModeSource } {
  const env = opts.env ?? process.env;
  if (opts.cliMode !== undefined) {
    const m = opts.cliMode.trim().toLowerCase();
    if (!(TAPE_MODES as readonly string[]).includes(m)) {
      throw new TapedeckError('E_MODE', `Invalid tape mode ${JSON.stringify(opts.cliMode)} from vitest --mode.`, { hint: `Valid modes: ${TAPE_MODES.join(', ')}.` });
    }
    return { mode: m as TapeMode, source: 'vitest --mode' };
  }
  // The default an invalid value's hint names: a test run's.
  const fallback = 'in tests update, replay when CI is set';
  const fromEnv = resolveModeWithSource(undefined, env, fallback);
  if (fromEnv.source !== 'default') return { mode: fromEnv.mode, source: fromEnv.source as 'TAPEDECK_MODE' | 'CACHE_MODE' };
  if (opts.option !== undefined && String(opts.option).trim() !== '') return { mode: resolveModeWithSource(opts.option, {}, fallback).mode, source: 'option' };
  return isCI(env) ? { mode: 'replay', source: 'CI' } : { mode: 'update', source: 'default' };
}

/** TAPEDECK_PRUNE's values that ask for a prune, and those that say no. */
const PRUNE_YES = ['1', 'true', 'unused', 'yes', 'on'];
const PRUNE_NO = ['', '0', 'false', 'no', 'off'];

/**
 * Whether the run was told to prune unused recordings (TAPEDECK_PRUNE set to `1`, `true`,
 * `unused`, `yes` or `on`), the command the run summaries print.
 *
 * @example
 * pruneRequested({ TAPEDECK_PRUNE: '1' }) // true
 */
export function pruneRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.TAPEDECK_PRUNE;
  return v !== undefined && PRUNE_YES.includes(v.trim().toLowerCase());
}

/**
 * Why TAPEDECK_PRUNE asks nothing the run understands (`enabled`, `y`), for the run summary's
 * line: such a value pruned nothing without a word. Undefined for a value that says yes or no.
 *
 * @example
 * pruneNotUnderstood({ TAPEDECK_PRUNE: 'enabled' }) // 'TAPEDECK_PRUNE="enabled" is not understood (...)'
 */
export function pruneNotUnderstood(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env.TAPEDECK_PRUNE;
  if (v === undefined || PRUNE_YES.includes(v.trim().toLowerCase()) || PRUNE_NO.includes(v.trim().toLowerCase())) return undefined;
  return `TAPEDECK_PRUNE=${JSON.stringify(v)} is not understood, so nothing was pruned: set TAPEDECK_PRUNE=1 to prune the unused recordings (1, true, yes, on or unused; 0, false, no or off for none)`;
}
