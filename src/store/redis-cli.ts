/**
 * `tapedeck push <tape> <redis-url>` and `tapedeck pull <redis-url> <tape>`: seed a shared Redis
 * store from a tape, snapshot it back; `tapedeck prune <redis-url>`: compact a namespace, as
 * `tapedeck prune <tape>` compacts a tape. Every message names the URL with its password masked.
 */
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { isRedisUrl, maskRedisUrl } from './backends/redis-connection.ts';
import { pullTape, pushTape } from './redis-transfer.ts';
import { RedisBackend } from './backends/redis-backend.ts';

export const PUSH_HELP = `Usage: tapedeck push <tape> <redis-url> [--namespace NS] [--ttl SECONDS]

Copy every record of a tape into a Redis store (docs/redis.md), in tape order, byte for byte.
The URL is redis://[user:password@]host[:port][/db], or rediss:// for TLS; a cluster node's
URL works too. Records already in the namespace stay.

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
  --ttl SECONDS    Let the pushed records expire after this long (default: never)
`;

export const PULL_HELP = `Usage: tapedeck pull <redis-url> <tape> [--namespace NS] [--force]

Write every record of a Redis namespace to a tape, in the order they were written; a tape
pushed into an empty namespace comes back byte for byte.

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
  --force          Replace an existing tape (atomically)
`;

export const PRUNE_HELP = `Usage: tapedeck prune <redis-url> [--namespace NS]

Compact a Redis namespace, as tapedeck prune <tape> compacts a tape: remove the records that do
not decode (each removal is one atomic script on its request key; records other writers add
meanwhile are kept), and drop from the namespace index the request keys whose records have all
expired. Recordings no test used are pruned by the test run itself: TAPEDECK_PRUNE=1 (docs/vitest.md).

Options:
  --namespace NS   Key prefix (default tapedeck, or ?namespace= in the URL)
`;

const USAGE = {
  push: 'Usage: tapedeck push <tape> <redis-url> (tapedeck push --help)',
  pull: 'Usage: tapedeck pull <redis-url> <tape> (tapedeck pull --help)',
  prune: 'Usage: tapedeck prune <redis-url> [--namespace NS] (tapedeck prune --help)',
};

function usage(cmd: 'push' | 'pull' | 'prune', why: string): TapedeckError {
  return new TapedeckError('E_ARG', `tapedeck ${cmd}: ${why}.`, { hint: USAGE[cmd] });
}

function parse(cmd: 'push' | 'pull' | 'prune', argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        namespace: { type: 'string' },
        ttl: { type: 'string' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    // parseArgs quotes the arguments it saw: a URL among them may hold a password.
    throw usage(cmd, maskRedisUrl((e as Error).message).replace(/\s+$/, ''));
  }
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
  if (!isRedisUrl(url)) throw usage('push', `${maskRedisUrl(url)} is not a redis:// or rediss:// URL${isRedisUrl(tape) ? ' (the tape comes first, then the URL)' : ''}`);
  let ttlMs: number | undefined;
  if (values.ttl !== undefined) {
    const s = Number(values.ttl);
    if (!(Number.isFinite(s) && s > 0)) throw usage('push', `--ttl must be a positive number of seconds, not ${JSON.stringify(values.ttl)}`);
    ttlMs = s * 1000;
  }
  const r = await pushTape(tape, url, { ...(values.namespace !== undefined ? { namespace: values.namespace } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) });
  for (const w of r.warnings) process.stderr.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  process.stdout.write(`pushed ${r.records} record${r.records === 1 ? '' : 's'} from ${tape} to ${r.url}${r.headerStored ? '' : ' (the namespace already had a tape header; kept it)'}\n`);
  return 0;
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
  if (!isRedisUrl(url)) throw usage('pull', `${maskRedisUrl(url)} is not a redis:// or rediss:// URL${isRedisUrl(tape) ? ' (the URL comes first, then the tape)' : ''}`);
  const r = await pullTape(url, tape, { ...(values.namespace !== undefined ? { namespace: values.namespace } : {}), force: values.force === true });
  process.stdout.write(`pulled ${r.records} record${r.records === 1 ? '' : 's'} from ${r.url} into ${tape} (${r.bytes} bytes)\n`);
  return 0;
}

/**
 * Runs `tapedeck prune <redis-url>`: removes the records of a namespace that do not decode;
 * returns the exit code.
 */
export async function pruneRedisCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse('prune', argv);
  if (values.help) {
    process.stdout.write(PRUNE_HELP);
    return 0;
  }
  const [url] = positionals;
  if (!url || positionals.length > 1 || !isRedisUrl(url)) throw usage('prune', 'give one redis:// or rediss:// URL');
  if (values.ttl !== undefined || values.force !== undefined) throw usage('prune', 'prune takes no --ttl or --force');
  const backend = new RedisBackend(url, values.namespace !== undefined ? { namespace: values.namespace } : {});
  try {
    // The full read behind rewrite also unlists keys whose records have all expired.
    const r = await backend.rewrite((records) =>
      records.flatMap((rec, i) => {
        try {
          rec.value();
          return [];
        } catch {
          return [i];
        }
      }),
    );
    const bad = r.warnings.length;
    for (const w of r.warnings) process.stderr.write(`removed record ${w.offset}: ${w.message}\n`);
    process.stdout.write(`${backend.location}: kept ${r.kept} record${r.kept === 1 ? '' : 's'}, removed ${bad} that did not decode\n`);
    return 0;
  } finally {
    await backend.close();
  }
}
