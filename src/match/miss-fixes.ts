/**
 * How a miss is fixed at each entry point (MissEntry in ./diagnose.ts), in its own words: how to
 * record the request again, the option that ignores a volatile member, the option that lets a
 * used recording answer again. Each names only what exists there: a createFetch user has no
 * `tapedeck serve` to restart, a ReplayCache has no `volatileKeys`.
 *
 * A page's only entry point is createReplayFetch (`browser`): browser bundles get
 * ./miss-fixes.browser.ts instead (package.json "browser"), which keeps the words of the Node
 * entry points (their commands, flags and options) out of a bundle with a 100 KB budget
 * (bench/size.mjs).
 */
import type { MissDifference, MissEntry } from './diagnose.ts';

/**
 * How to record the request again, in the words of the entry point.
 *
 * @example
 * recordHow({ kind: 'proxy' }) // "re-record: restart tapedeck serve with --mode record"
 */
export function recordHow(entry: MissEntry): string {
  switch (entry.kind) {
    case 'test':
      return `record it: ${entry.recordCommand ?? 'TAPEDECK_MODE=update <your test command>'}`;
    case 'fetch':
      // An explicit mode option wins over TAPEDECK_MODE, so only the option would record then.
      return entry.modeFromOption ? "re-record: createFetch({ mode: 'record' })" : "re-record: TAPEDECK_MODE=record (or createFetch mode 'record')";
    case 'proxy':
      return 're-record: restart tapedeck serve with --mode record';
    case 'browser':
      return "re-record in Node (createFetch or tapedeck serve in mode 'record'), then load the new tape";
    case 'cache':
      // As createFetch: the option when it set the mode (it wins over the environment), else
      // either; a command only when the caller gave one (no placeholder to fill in).
      if (entry.recordCommand) return `re-record: ${entry.recordCommand}`;
      return entry.modeFromOption ? "re-record: ReplayCache.open(path, { mode: 'record' })" : "re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')";
    default:
      return entry.recordCommand ? `re-record: ${entry.recordCommand}` : 're-record the recordings';
  }
}

/** The option that ignores volatile names at this entry point, or undefined where there is none. */
export function ignoreOption(entry: MissEntry, v: NonNullable<MissDifference['volatile']>): string | undefined {
  const names = JSON.stringify(v.names);
  if (entry.kind === 'cache') return v.option === 'ignoreArgs' ? `ignoredArgs: ${names}` : undefined;
  if (entry.kind === 'proxy') {
    return v.option === 'ignoreArgs' ? v.names.map((x) => `--ignore-arg ${x}`).join(' ') : `volatileKeys: ${names} (createHandler or startProxy option)`;
  }
  return `${v.option}: ${names}`;
}

/** The option that lets a used recording answer again, where the entry point has one. */
export function repeatOption(entry: MissEntry): string | undefined {
  if (entry.kind === 'matcher') return 'allowRepeats: true';
  if (entry.kind === 'proxy') return 'restart the proxy without --strict-order';
  if (entry.kind === 'fetch' || entry.kind === 'test' || entry.kind === 'browser') return 'drop strictOrder: true';
  return undefined;
}

/**
 * The fix where the entry point has no option for a volatile message member (ReplayCache keys
 * whole messages), else undefined.
 *
 * @example
 * memberFix({ kind: 'cache' }, ['id']) // 'Only the message member "id" differs: ReplayCache keys whole messages, ...'
 */
export function memberFix(entry: MissEntry, names: readonly string[]): string | undefined {
  if (entry.kind !== 'cache') return undefined;
  return `Only the message member "${names.join('", "')}" differs: ReplayCache keys whole messages, so leave it out of the requests you pass to get() and put().`;
}
