/**
 * Tape modes: how a tape-backed cache treats the live API.
 *
 * - `replay` (the default): serve recordings only; a request with no recording is an error
 *   (`E_MISS`), never a live call.
 * - `record`: call the live API for every request and record the result; at close, only what was
 *   recorded in this run is kept (stale recordings are cleaned up).
 * - `update`: serve what the tape has, record what is missing.
 * - `passthrough`: the tape is neither read nor written; every request goes to the live API.
 * - `once`: `record` when the tape does not exist yet, `replay` when it does; an existing tape is
 *   never added to (VCR.py's default). Decided when the tape is opened (src/store/collection.ts).
 */
import { TapedeckError } from '../errors.ts';

/**
 * What a tape does with a request: replay it, record it, record what is missing (update), pass it
 * through, or record once (docs/modes.md).
 */
export type TapeMode = 'replay' | 'record' | 'update' | 'passthrough' | 'once';

/** Every TapeMode, for validating one read from a setting. */
export const TAPE_MODES: readonly TapeMode[] = Object.freeze(['replay', 'record', 'update', 'passthrough', 'once'] as const);

/** Where a resolved mode came from: the option, one of the environment variables, or the default. */
export type TapeModeSource = 'option' | 'TAPEDECK_MODE' | 'CACHE_MODE' | 'default';

/** Environment variables read for the mode, in priority order (CACHE_MODE is the name DSPy-style caches use). */
export const MODE_ENV_VARS = ['TAPEDECK_MODE', 'CACHE_MODE'] as const;

/**
 * Environment variables by name. Not NodeJS.ProcessEnv: these declarations reach a page's build,
 * whose project may have no Node types.
 */
type Env = Readonly<Record<string, string | undefined>>;

/** The environment, or nothing where there is no process (a browser). */
function processEnv(): Env {
  return typeof process !== 'undefined' && process.env ? process.env : {};
}

function isMode(v: string): v is TapeMode {
  return (TAPE_MODES as readonly string[]).includes(v);
}

/**
 * Like {@link resolveMode}, and also says where the mode came from (so a miss can tell the user
 * which knob to turn: an explicit option is not overridden by the environment). `fallback` is
 * what an invalid value's hint names as the default (a test run's is not replay).
 *
 * @example
 * resolveModeWithSource(undefined, { TAPEDECK_MODE: 'update' }) // { mode: 'update', source: 'TAPEDECK_MODE' }
 */
export function resolveModeWithSource(option?: string, env: Env = processEnv(), fallback = 'replay'): { mode: TapeMode; source: TapeModeSource } {
  const candidates: [TapeModeSource, string | undefined][] = [
    ['option', option],
    ['TAPEDECK_MODE', env.TAPEDECK_MODE],
    ['CACHE_MODE', env.CACHE_MODE],
  ];
  for (const [source, raw] of candidates) {
    // An unset or blank value (`TAPEDECK_MODE= npm test`) falls through to the next source.
    if (raw === undefined || raw === null) continue;
    if (typeof raw !== 'string') {
      throw new TapedeckError('E_MODE', `Invalid tape mode ${String(raw)} (from the \`mode\` option): expected a string.`, {
        source,
        value: raw,
        valid: [...TAPE_MODES],
        hint: `Valid modes: ${TAPE_MODES.join(', ')}.`,
      });
    }
    const value = raw.trim().toLowerCase();
    if (value === '') continue;
    if (isMode(value)) return { mode: value, source };
    const where = source === 'option' ? 'the `mode` option' : `the environment variable ${source}`;
    throw new TapedeckError('E_MODE', `Invalid tape mode ${JSON.stringify(raw)} from ${where}.`, {
      source,
      value: raw,
      valid: [...TAPE_MODES],
      hint: `Valid modes: ${TAPE_MODES.join(', ')} (default ${fallback}).${source === 'option' ? '' : ` Fix or unset ${source}.`}`,
    });
  }
  return { mode: 'replay', source: 'default' };
}

/**
 * The tape mode: the option, else `TAPEDECK_MODE`, else `CACHE_MODE` (the DSPy-style name), else
 * `'replay'`. Values are trimmed and case-insensitive; an empty value counts as unset. Anything
 * else is a TapedeckError `E_MODE` that lists the valid modes and names where the bad value came
 * from.
 *
 * @example
 * resolveMode(undefined, { TAPEDECK_MODE: 'record' }) // 'record'
 * resolveMode('update', { TAPEDECK_MODE: 'record' })  // 'update': the option wins
 */
export function resolveMode(option?: string, env: Env = processEnv()): TapeMode {
  return resolveModeWithSource(option, env).mode;
}
