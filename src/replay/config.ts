// Replay configuration: enabled, max entries, TTL. Each setting comes from the option if given,
// else its environment variable, else the default, the same precedence as the tape mode (an
// explicit option is never overridden by the environment). Bad values are errors that name
// where they came from; nothing is silently clamped.

import { TapedeckError } from '../errors.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';

/**
 * Options of the trace-token replay store: whether it runs, how many entries it keeps and for how
 * long.
 */
export interface ReplayConfig {
  /** Serve replays (default true; false opts out). Disabled: every replay is 501. */
  enabled: boolean;
  /** Most entries kept; the least recently used goes first (default 1024, at least 1). */
  maxEntries: number;
  /** Entries older than this (ms since stored) are gone; 0 keeps them until evicted (default 24 h). */
  ttlMs: number;
}

/**
 * ReplayConfig with every member decided (resolveReplayConfig): the option, else the environment,
 * else the default.
 */
export interface ResolvedReplayConfig extends ReplayConfig {
  /** Where each setting came from, e.g. `{ maxEntries: 'TAPEDECK_REPLAY_MAX_ENTRIES' }`. */
  sources: Record<keyof ReplayConfig, 'option' | 'default' | (typeof REPLAY_ENV)[keyof typeof REPLAY_ENV]>;
}

/** The environment variables, by setting. */
export const REPLAY_ENV = {
  enabled: 'TAPEDECK_REPLAY_ENABLED',
  maxEntries: 'TAPEDECK_REPLAY_MAX_ENTRIES',
  ttlMs: 'TAPEDECK_REPLAY_TTL_MS',
} as const;

/** The replay store settings when neither an option nor the environment gives one. */
export const REPLAY_DEFAULTS: Readonly<ReplayConfig> = Object.freeze({ enabled: true, maxEntries: 1024, ttlMs: 24 * 60 * 60 * 1000 });

const CONFIG_OPTIONS = optionNames<ReplayConfig>()(['enabled', 'maxEntries', 'ttlMs']);

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

function configError(where: string, raw: unknown, expected: string, hint: string, variable: string | undefined, option: string): TapedeckError {
  const shown = typeof raw === 'string' ? JSON.stringify(raw) : String(raw);
  return new TapedeckError('E_CONFIG', `Invalid ${where}: ${shown}; expected ${expected}.`, {
    ...(variable ? { variable } : { option }),
    value: raw,
    hint,
  });
}

function envOf(env: Record<string, string | undefined> | undefined): Record<string, string | undefined> {
  if (env) return env;
  return typeof process !== 'undefined' && process.env ? process.env : {};
}

function integer(raw: unknown, where: string, min: number, hint: string, variable: string | undefined, option: string): number {
  // Strings only from the environment: an option of the wrong type is a bug in the caller's code.
  if (typeof raw === 'string' && variable) {
    const t = raw.trim();
    // Digits only: "-1", "1e3", "0x10", "12.5" and "" are all mistakes worth hearing about.
    if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t)) || Number(t) < min) {
      throw configError(where, raw, `an integer >= ${min}`, hint, variable, option);
    }
    return Number(t);
  }
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < min) throw configError(where, raw, `an integer >= ${min}`, hint, variable, option);
  return raw;
}

/**
 * The replay settings from options, then `TAPEDECK_REPLAY_ENABLED`, `TAPEDECK_REPLAY_MAX_ENTRIES`
 * and `TAPEDECK_REPLAY_TTL_MS`, then the defaults (enabled, 1024 entries, 24 h). An empty variable
 * counts as unset. Booleans take true/false/1/0/yes/no/on/off; numbers must be plain
 * non-negative integers (max entries at least 1). Anything else throws `E_CONFIG` naming the
 * variable or option.
 *
 * @example
 * resolveReplayConfig({}, { TAPEDECK_REPLAY_MAX_ENTRIES: '5000' }).maxEntries // 5000
 * resolveReplayConfig({ ttlMs: 0 }, { TAPEDECK_REPLAY_TTL_MS: '60000' }).ttlMs // 0: the option wins
 */
export function resolveReplayConfig(opts: Partial<ReplayConfig> = {}, env?: Record<string, string | undefined>): ResolvedReplayConfig {
  if (opts === null || typeof opts !== 'object') {
    throw new TapedeckError('E_CONFIG', 'Replay options must be an object.', { hint: '{ enabled?, maxEntries?, ttlMs? }' });
  }
  // A misspelt name (`enable: false`) would leave its setting at the environment's or default.
  checkOptionNames(opts, CONFIG_OPTIONS, 'resolveReplayConfig', 'docs/replay.md');
  const e = envOf(env);
  const out = { ...REPLAY_DEFAULTS, sources: { enabled: 'default', maxEntries: 'default', ttlMs: 'default' } } as ResolvedReplayConfig;

  const pick = (k: keyof ReplayConfig): { raw: unknown; variable?: string } | undefined => {
    if (opts[k] !== undefined) return { raw: opts[k] };
    const v = e[REPLAY_ENV[k]];
    if (v === undefined || v.trim() === '') return undefined;
    return { raw: v, variable: REPLAY_ENV[k] };
  };

  const en = pick('enabled');
  if (en) {
    const where = en.variable ? `environment variable ${en.variable}` : 'option `enabled`';
    const hint = en.variable ? `Set ${en.variable} to true or false (or unset it).` : 'Pass enabled: true or false.';
    if (typeof en.raw === 'boolean') out.enabled = en.raw;
    else if (en.variable && typeof en.raw === 'string' && TRUE.has(en.raw.trim().toLowerCase())) out.enabled = true;
    else if (en.variable && typeof en.raw === 'string' && FALSE.has(en.raw.trim().toLowerCase())) out.enabled = false;
    else throw configError(where, en.raw, 'true or false', hint, en.variable, 'enabled');
    out.sources.enabled = en.variable ? REPLAY_ENV.enabled : 'option';
  }
  const max = pick('maxEntries');
  if (max) {
    const where = max.variable ? `environment variable ${max.variable}` : 'option `maxEntries`';
    const hint = max.variable
      ? `Set ${max.variable} to a whole number of entries such as 1024 (to turn replay off, set ${REPLAY_ENV.enabled}=false).`
      : 'Pass a whole number of entries such as 1024 (to turn replay off, pass enabled: false).';
    out.maxEntries = integer(max.raw, where, 1, hint, max.variable, 'maxEntries');
    out.sources.maxEntries = max.variable ? REPLAY_ENV.maxEntries : 'option';
  }
  const ttl = pick('ttlMs');
  if (ttl) {
    const where = ttl.variable ? `environment variable ${ttl.variable}` : 'option `ttlMs`';
    const hint = ttl.variable ? `Set ${ttl.variable} to milliseconds, e.g. 86400000 for a day, or 0 for no expiry.` : 'Pass milliseconds, e.g. 86_400_000 for a day, or 0 for no expiry.';
    out.ttlMs = integer(ttl.raw, where, 0, hint, ttl.variable, 'ttlMs');
    out.sources.ttlMs = ttl.variable ? REPLAY_ENV.ttlMs : 'option';
  }
  return out;
}
