/**
 * `tapedeck push <tape> <redis-url>` and `tapedeck pull <redis-url> <tape>`: seed a shared Redis
 * store from a tape, snapshot it back; `tapedeck verify <redis-url>` and `tapedeck prune
 * <redis-url>`: check and compact a namespace, as they check and compact a tape. Every message
 * names the URL with its password masked, and a damaged record by where it is in Redis.
 */
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { usageError } from '../cli-errors.ts';
import { argsError, dashValues } from '../cli-args.ts';
import { isMistypedRedisUrl, isRedisUrl, maskRedisUrl, passwordNote, typedRedisUrl } from './backends/redis-connection.ts';
import { checkStore } from './backends/open.ts';
import { pullTape, pushTape } from './redis-transfer.ts';
import { RedisRecords } from './backends/redis.ts';
import { redisCliTarget, redisLocation, redisRecordDamage, redisRecordPlace } from './backends/redis-damage.ts';
import { decodePayload, parseHeader } from './tape-codec.ts';
import { newerRecordText, newerRecordVersion, UPGRADE_COMMAND } from './record-version.ts';
import { newerKeySpec, newerKeyText, newerKeyWhat } from './newer-key-spec.ts';
import { missingNamespace } from './backends/redis-missing.ts';
import { interruptedRedisRuns } from './backends/redis-interrupted.ts';

export const PUSH_HELP = `Usage: tapedeck push <tape> <redis-url> [--namespace NS] [--ttl SECONDS]

Copy every record of a tape into a Redis store (docs/redis.md), in tape order, byte for byte.
The URL is redis://[user:password@]host[:port][/db], or rediss:// for TLS; a cluster node's
URL works too. Records already in the namespace stay.

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
  --ttl SECONDS    Let the pushed records expire after this long (default, and 0: never)
`;

export const PULL_HELP = `Usage: tapedeck pull <redis-url> <tape> [--namespace NS] [--force]

Write every record of a Redis namespace to a tape, in the order they were written; a tape
pushed into an empty namespace comes back byte for byte. A record that does not read is left
out and named on stderr (its Redis hash and field), and the command exits 1; the tape holds
every other record (tapedeck verify <redis-url> lists such records, tapedeck prune removes them).
Records the namespace's index lost (a Redis restart without persistence) are found by a scan and
written too, with E_STORE_DAMAGED on stderr and exit 1: push the tape to list them again.

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
  --force          Replace an existing tape (atomically; not while a writer records to it:
                   E_TAPE_IN_USE names it)
`;

export const PRUNE_HELP = `Usage: tapedeck prune <redis-url> [--namespace NS]

Compact a Redis namespace, as tapedeck prune <tape> compacts a tape: remove the records that do
not decode, or are filed under a key their bytes do not name (each removal is one atomic script
on its request key; records other writers add meanwhile are kept), and drop from the namespace
index the request keys whose records have all expired. Each removed record is named on stderr
with its request key, sequence number, and Redis hash and field. Recordings no test used are
pruned by the test run itself: TAPEDECK_PRUNE=1 (docs/vitest.md).

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
`;

export const VERIFY_HELP = `Usage: tapedeck verify <redis-url> [--namespace NS]

Check a Redis namespace, as tapedeck verify <tape> checks a tape: its stored tape header, and
that every live record decodes and is filed under the key its bytes name. Each record that does
not is listed with its request key, sequence number, and the Redis hash and field that hold it.
Nothing is changed. Exits 1 when a problem is found; tapedeck prune <redis-url> removes such
records, and tapedeck pull leaves them out.

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
`;

type RedisCommand = 'push' | 'pull' | 'prune' | 'verify';

const USAGE: Record<RedisCommand, string> = {
  push: 'Usage: tapedeck push <tape> <redis-url> (tapedeck push --help)',
  pull: 'Usage: tapedeck pull <redis-url> <tape> (tapedeck pull --help)',
  prune: 'Usage: tapedeck prune <redis-url> [--namespace NS] (tapedeck prune --help)',
  verify: 'Usage: tapedeck verify <redis-url> [--namespace NS] (tapedeck verify <redis-url> --help)',
};

/**
 * A command line push, pull, prune or verify cannot run, with the usage: `E_USAGE` for its words
 * (an argument missing or one too many, an option the command does not take), `E_ARG` for a
 * value that is wrong, as every command tells them (exit 2 either way).
 */
function usage(cmd: RedisCommand, why: string, code: 'E_USAGE' | 'E_ARG' = 'E_USAGE'): TapedeckError {
  return new TapedeckError(code, `tapedeck ${cmd}: ${why}.`, { hint: USAGE[cmd] });
}

/**
 * E_ARG for a mistyped Redis URL (`redis:/host:6379`, one slash), with the URL to write as
 * `tapedeck add` and createFetch give it (checkStore); read as a tape path, verify and prune said
 * the tape did not exist. Undefined for anything else.
 *
 * @example
 * throw mistyped('verify', 'redis:/127.0.0.1:6379') ?? usage('verify', '...')
 */
function mistyped(cmd: RedisCommand, arg: string | undefined): TapedeckError | undefined {
  if (arg === undefined || !isMistypedRedisUrl(arg)) return undefined;
  try {
    checkStore(arg);
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    return new TapedeckError('E_ARG', `tapedeck ${cmd}: "${String(e.details.path ?? maskRedisUrl(arg))}" is not a Redis URL (nor a tape path).`, { hint: `${e.hint ?? ''} ${USAGE[cmd]}`.trim() });
  }
  return undefined;
}

const OPTIONS = {
  namespace: { type: 'string' },
  ttl: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(cmd: RedisCommand, argv: string[]) {
  try {
    // `--ttl -5` joined as `--ttl=-5`, so the flag's own check says what it takes.
    return parseArgs({ args: dashValues(argv, OPTIONS), allowPositionals: true, options: OPTIONS });
  } catch (e) {
    // parseArgs quotes the arguments it saw: a URL among them may hold a password.
    const { message, didYouMean } = argsError(e, OPTIONS);
    throw new TapedeckError('E_USAGE', `tapedeck ${cmd}: ${maskRedisUrl(message).replace(/\s+$/, '')}`, { hint: `${didYouMean}${USAGE[cmd]}` });
  }
}

/** The `?namespace=` of a URL, if it has one (undefined for text that is no URL). */
function namespaceIn(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get('namespace') ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The namespace `--namespace` names, checked against the URL's `?namespace=`: two different
 * ones would silently pick one of two stores (the API lets the option win; a command line
 * that says both means one of them is a mistake).
 */
function namespaceOption(cmd: RedisCommand, url: string, flag: string | undefined): string | undefined {
  let inUrl: string | null = null;
  try {
    inUrl = new URL(url).searchParams.get('namespace');
  } catch {
    return flag; // not a URL: opening the store says so, masked
  }
  if (flag !== undefined && inUrl !== null && inUrl !== flag) {
    throw usageError(
      `tapedeck ${cmd}: --namespace ${flag} and the URL's ?namespace=${inUrl} disagree.`,
      `Give the namespace once: drop ?namespace= from the URL, or drop --namespace (${USAGE[cmd]}).`,
    );
  }
  return flag;
}

/** Runs `tapedeck push`; returns the exit code. */
export async function pushCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse('push', argv);
  if (values.help) {
    process.stdout.write(PUSH_HELP);
    return 0;
  }
  const [tape, url] = positionals;
  if (!tape || !url || positionals.length > 2) throw usage('push', 'give the tape and the Redis URL');
  const typo = mistyped('push', url);
  if (typo) throw typo;
  if (!isRedisUrl(url)) throw usage('push', `${maskRedisUrl(url)} is not a redis:// or rediss:// URL${isRedisUrl(tape) ? ' (the tape comes first, then the URL)' : ''}`, 'E_ARG');
  let ttlMs: number | undefined;
  if (values.ttl !== undefined) {
    const s = Number(values.ttl);
    // One rule with ?ttl= and the ttlMs option: 0 keeps records forever.
    if (!/^\d+(?:\.\d+)?$/.test(values.ttl)) throw usage('push', `--ttl must be a number of seconds, 0 or more (0 keeps the records forever), not ${JSON.stringify(values.ttl)}`, 'E_ARG');
    ttlMs = s * 1000;
  }
  const namespace = namespaceOption('push', url, values.namespace);
  const r = await pushTape(tape, url, { ...(namespace !== undefined ? { namespace } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) });
  for (const w of r.warnings) process.stderr.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  // A note, not damage: every record was pushed, so the exit code stays 0.
  for (const n of r.notes) process.stderr.write(`note: ${n.code}: ${n.message}\n`);
  const left = r.warnings.length;
  process.stdout.write(
    `pushed ${r.records} record${r.records === 1 ? '' : 's'} from ${tape} to ${redisLocation(r.url, r.namespace)}${r.already ? ` (${r.already} already there, not pushed again)` : ''}${r.headerStored ? '' : ' (the namespace already had a tape header; kept it)'}${left ? `; left out ${left} damaged region${left === 1 ? '' : 's'} of the tape (listed above)` : ''}\n`,
  );
  // As pull: the namespace does not hold all the tape held, and scripts and CI see it.
  return left ? 1 : 0;
}

/** Runs `tapedeck pull`; returns the exit code. */
export async function pullCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse('pull', argv);
  if (values.help) {
    process.stdout.write(PULL_HELP);
    return 0;
  }
  const [url, tape] = positionals;
  if (!tape || !url || positionals.length > 2) throw usage('pull', 'give the Redis URL and the tape to write');
  const typo = mistyped('pull', url);
  if (typo) throw typo;
  if (!isRedisUrl(url)) throw usage('pull', `${maskRedisUrl(url)} is not a redis:// or rediss:// URL${isRedisUrl(tape) ? ' (the URL comes first, then the tape)' : ''}`, 'E_ARG');
  const namespace = namespaceOption('pull', url, values.namespace);
  // Another store as the destination was taken for a local path (`redis:/host/…`, one slash
  // left by path normalization) and failed deep in a write: pull writes a tape file only.
  if (isRedisUrl(tape) || isMistypedRedisUrl(tape)) {
    const dest = isRedisUrl(tape) ? tape : String(tape).replace(/^(rediss?)(?::\/?|\/\/)/i, (_m, scheme: string) => `${scheme.toLowerCase()}://`);
    const from = namespace ?? namespaceIn(url) ?? 'tapedeck';
    const to = namespaceIn(dest) ?? 'tapedeck';
    const typed = [url, dest].map((u) => typedRedisUrl(maskRedisUrl(u).replace(/\?.*$/, '')));
    throw new TapedeckError('E_ARG', `tapedeck pull: the destination ${maskRedisUrl(tape)} is a Redis store; pull writes a tape file.`, {
      hint: `To copy between namespaces or stores, pull into a file, then push it: tapedeck pull '${typed[0]}' copy.tape --namespace ${from}, then tapedeck push copy.tape '${typed[1]}' --namespace ${to}${passwordNote(typed.join(' '))}.`,
    });
  }
  const r = await pullTape(url, tape, { ...(namespace !== undefined ? { namespace } : {}), force: values.force === true });
  for (const w of r.warnings) process.stderr.write(`${w.code}: ${w.message}\n`);
  // E_STORE_DAMAGED: records the index lost, written all the same; the others were left out.
  const left = r.warnings.filter((w) => w.code !== 'E_STORE_DAMAGED').length;
  process.stdout.write(`pulled ${r.records} record${r.records === 1 ? '' : 's'} from ${redisLocation(r.url, r.namespace)} into ${tape} (${r.bytes} bytes)${left ? `; left out ${left} that did not read (listed above)` : ''}\n`);
  // The tape is not the namespace's whole contents, or the namespace is damaged: scripts and CI
  // see it in the exit code.
  return r.warnings.length ? 1 : 0;
}

/**
 * Runs `tapedeck verify <redis-url>`: lists the records of a namespace that do not read, where
 * they are in Redis; returns the exit code (1 when a problem is found).
 */
export async function verifyRedisCommand(argv: string[]): Promise<number> {
  return onNamespace('verify', VERIFY_HELP, argv, async (store) => {
    const where = redisLocation(store.url, store.namespace);
    const target = redisCliTarget(store.url, store.namespace);
    const header = await store.header();
    // Checking does not tidy: keys whose records all expired stay listed for the next reader.
    const records = await store.readAll({ unlist: false });
    if (header === undefined && records.length === 0) throw await missingNamespace(store);
    const problems: string[] = [];
    // A header that does not read is its own problem, with its own fix (a newer format: upgrade).
    const headerProblems: string[] = [];
    const versionProblems: string[] = [];
    let about = 'no stored tape header (written by proxies or test runs; tapedeck pull gives the tape a fresh one)';
    if (header !== undefined) {
      try {
        const h = parseHeader(header, `${where}, key ${store.headerKey}`).header;
        about = `format ${h.formatVersion}, created ${h.created}, tapedeck ${h.tapedeckVersion}`;
      } catch (e) {
        const code = e instanceof TapedeckError ? e.code : 'E_TAPE_CORRUPT';
        about = code === 'E_TAPE_VERSION' ? 'a stored tape header of a newer tape format (listed below)' : 'a stored tape header that does not read (listed below)';
        headerProblems.push(`${code} in the stored tape header: ${(e as Error).message}`);
      }
    }
    let n = 0;
    const keys = new Set<string>();
    // Records keyed under a newer request key spec (their keys cannot be checked here), as
    // verify <tape> counts them: one line naming the first.
    let keyed = 0;
    let firstKeyed: { name: string; version: number; what: string } | undefined;
    for (const r of records) {
      const why = redisRecordDamage(r, { decode: true });
      const value = why === undefined ? decodePayload(r.payload) : undefined;
      // Intact, but written by a newer tapedeck (a fleet being upgraded): replay cannot serve it,
      // and says so; verify <tape> lists it too.
      const newer = why === undefined ? newerRecordVersion(value) : undefined;
      if (newer) {
        versionProblems.push(`E_TAPE_VERSION at record ${r.seq}: ${redisRecordPlace(store.namespace, r)} ${newerRecordText(newer)}. It was written by a newer tapedeck; upgrade tapedeck to read it (${UPGRADE_COMMAND}).`);
      } else if (why === undefined) {
        n++;
        keys.add(r.key);
        const version = newerKeySpec(value);
        if (version !== undefined && keyed++ === 0) firstKeyed = { name: redisRecordPlace(store.namespace, r), version, what: newerKeyWhat(value) };
      } else problems.push(`E_TAPE_CORRUPT at record ${r.seq}: ${redisRecordPlace(store.namespace, r)} is ${why}.`);
    }
    if (firstKeyed) versionProblems.push(`E_TAPE_VERSION: ${newerKeyText(keyed, firstKeyed)}.`);
    // A record run killed before it closed left the recordings it was to replace: replay
    // serves those first (a note for the run, as verify <tape> gives it).
    const interrupted = interruptedRedisRuns(where, await store.endedRecordRuns(), records).map((w) => `${w.code}: ${w.message}`);
    const unlisted = await unlistedRecords(store);
    if (unlisted.keys > 0) {
      problems.push(
        `E_STORE_DAMAGED: ${unlisted.keys} request key${unlisted.keys === 1 ? ' holds' : 's hold'} ${unlisted.records} record${unlisted.records === 1 ? '' : 's'} the namespace's index does not list (the index was lost, as after a Redis restart without persistence): a replay finds them when their request is asked, pull and prune do not. List them again by pushing the tape they came from: tapedeck push <tape> ${target}.`,
      );
    }
    // Like tapedeck verify <tape>: the intact records are counted, the damaged ones listed.
    process.stdout.write(`${where}: ${about}, ${n} record${n === 1 ? '' : 's'} under ${keys.size} request key${keys.size === 1 ? '' : 's'}\n`);
    for (const p of [...headerProblems, ...problems, ...versionProblems, ...interrupted]) process.stdout.write(`${p}\n`);
    const counted = n === 0 ? 'no record is intact' : `the ${n} record${n === 1 ? '' : 's'} counted above ${n === 1 ? 'is' : 'are'} intact`;
    // Each record of a newer key spec is a problem, though one line lists them.
    const all = headerProblems.length + problems.length + versionProblems.length + (keyed > 0 ? keyed - 1 : 0) + interrupted.length;
    // The prune hint only where prune is the fix (records that do not read); a note's own fix is in it.
    // Where the password goes, said as the parenthesis' last clause rather than one of its own.
    const fill = passwordNote(target).replace(/^ \((.*)\)$/, '; $1');
    const fix = problems.length ? ` (tapedeck prune ${target} removes the records that do not read; tapedeck pull leaves them out${fill})` : '';
    process.stdout.write(all ? `${all} problem(s); ${counted}${fix}.\n` : n === 0 ? 'ok (no records)\n' : 'ok\n');
    return all ? 1 : 0;
  });
}

/**
 * The live records of request keys the namespace's index does not list: found by a SCAN of every
 * master, so verify tells a namespace whose index was lost (and partly made again by later
 * writes) from a whole one. A SCAN refused (an ACL) finds nothing.
 */
async function unlistedRecords(store: RedisRecords): Promise<{ keys: number; records: number }> {
  const listed = new Set(await store.keys());
  const stray = (await store.storedKeys().catch(() => [])).filter((k) => !listed.has(k));
  let keys = 0;
  let records = 0;
  for (let i = 0; i < stray.length; i += 64) {
    for (const recs of await Promise.all(stray.slice(i, i + 64).map((k) => store.read(k)))) {
      if (recs.length === 0) continue; // expired, not yet freed by Redis
      keys++;
      records += recs.length;
    }
  }
  return { keys, records };
}

/**
 * Runs `tapedeck prune <redis-url>`: removes the records of a namespace that do not read (bytes
 * that do not decode, or that do not name the key they are filed under); returns the exit code.
 */
export async function pruneRedisCommand(argv: string[]): Promise<number> {
  return onNamespace('prune', PRUNE_HELP, argv, async (store) => {
    // The full read also unlists keys whose records have all expired.
    const [header, records] = await Promise.all([store.header(), store.readAll()]);
    if (header === undefined && records.length === 0) throw await missingNamespace(store, 'nothing to prune');
    const byKey = new Map<string, number[]>();
    for (const r of records) {
      const why = redisRecordDamage(r, { decode: true });
      if (why === undefined) continue;
      process.stderr.write(`removed ${redisRecordPlace(store.namespace, r)}: ${why}\n`);
      const seqs = byKey.get(r.key);
      if (seqs) seqs.push(r.seq);
      else byKey.set(r.key, [r.seq]);
    }
    // Exactly those sequence numbers, one atomic script per request key: records other writers
    // add meanwhile have new numbers and stay.
    await Promise.all([...byKey].map(([key, seqs]) => store.remove(key, seqs)));
    const bad = [...byKey.values()].reduce((n, seqs) => n + seqs.length, 0);
    const kept = records.length - bad;
    process.stdout.write(`${redisLocation(store.url, store.namespace)}: kept ${kept} record${kept === 1 ? '' : 's'}, removed ${bad} that did not decode\n`);
    return 0;
  });
}

/**
 * A command on one namespace (`tapedeck verify|prune <redis-url> [--namespace NS]`): its help,
 * its one URL and no other option checked, then `run` on the open store, closed after.
 */
async function onNamespace(cmd: 'verify' | 'prune', help: string, argv: string[], run: (store: RedisRecords) => Promise<number>): Promise<number> {
  const { values, positionals } = parse(cmd, argv);
  if (values.help) {
    process.stdout.write(help);
    return 0;
  }
  const [url] = positionals;
  const typo = positionals.length === 1 ? mistyped(cmd, url) : undefined;
  if (typo) throw typo;
  if (!url || positionals.length > 1 || !isRedisUrl(url)) throw usage(cmd, 'give one redis:// or rediss:// URL');
  if (values.ttl !== undefined || values.force !== undefined) throw usage(cmd, `${cmd} takes no --ttl or --force`);
  const namespace = namespaceOption(cmd, url, values.namespace);
  const store = await RedisRecords.open(url, namespace !== undefined ? { namespace } : {});
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}
