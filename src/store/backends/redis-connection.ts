/**
 * Connecting to Redis: parsing and masking `redis://` / `rediss://` URLs, loading the client on
 * demand, telling a single node from a cluster, and turning every connection failure into one
 * `E_STORE_UNAVAILABLE` error that names the URL with its password masked.
 *
 * The client is node-redis (`redis` on npm), an optional peer dependency: it is imported the
 * first time a Redis store is opened, so users who never use Redis never install it
 * (docs/redis.md says why node-redis and not ioredis).
 */
import { TapedeckError } from '../../errors.ts';

/** A Redis URL taken apart. `masked` is the only form that may be printed or stored. */
export interface RedisTarget {
  /** The URL as given (may hold a password: never print it, never put it in an error). */
  url: string;
  /** The URL with the password replaced by `***` (user names are kept: they are not secret). */
  masked: string;
  host: string;
  port: number;
  /** Database number from the path (`/0`); a cluster only has database 0. */
  database: number;
  username?: string;
  password?: string;
  tls: boolean;
}

const MASK = '***';

/** The query parameters a Redis store URL takes (docs/redis.md, "Set-up"). */
export const QUERY_PARAMETERS: readonly string[] = ['namespace', 'ttl'];

/** What a namespace (a key prefix) may hold. */
export const NAMESPACE_RE = /^[A-Za-z0-9._/-]{1,200}$/;
/** The fix for a namespace that does not match {@link NAMESPACE_RE}. */
export const NAMESPACE_HINT = 'Use 1 to 200 letters, digits, dots, dashes, underscores or slashes (e.g. my-app/ci).';

/**
 * The URL with any password replaced by `***`; text that does not parse as a URL is masked
 * wholesale between `://` and `@`. Use it for every message that names a Redis URL.
 *
 * @example
 * maskRedisUrl('redis://app:hunter2@cache:6379/0') // 'redis://app:***@cache:6379/0'
 */
export function maskRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = MASK;
    return u.toString();
  } catch {
    return String(url).replace(/(:\/\/)([^@/]*)@/, (_m, s: string, cred: string) => `${s}${cred.includes(':') ? `${cred.slice(0, cred.indexOf(':'))}:${MASK}` : MASK}@`);
  }
}

// What a URL to type holds where the masked password was: the mask run as written is a wrong
// password (WRONGPASS), and leaving the password out is none (NOAUTH).
const TO_FILL = '<password>';

/**
 * A masked Redis URL as a hint gives it to type or run: `<password>` in place of the mask, a
 * place for the user to fill in (the password itself is never printed). Follow it with
 * {@link passwordNote}, which says so.
 *
 * @example
 * typedRedisUrl('redis://app:***@cache:6379/0') // 'redis://app:<password>@cache:6379/0'
 * typedRedisUrl('redis://cache:6379/0')         // 'redis://cache:6379/0'
 */
export function typedRedisUrl(masked: string): string {
  return masked.replace(/^(rediss?:\/\/[^/@]*:)\*\*\*@/i, `$1${TO_FILL}@`);
}

/**
 * What a hint says after a URL of {@link typedRedisUrl} that has a place for the password
 * ('' for one without).
 *
 * @example
 * passwordNote('redis://:<password>@cache:6379/0') // " (put the store's password in place of <password>)"
 */
export function passwordNote(typed: string): string {
  return typed.includes(`:${TO_FILL}@`) ? ` (put the store's password in place of ${TO_FILL})` : '';
}

/**
 * Removes every occurrence of `secret` (and its URL-encoded form) from a message: client
 * libraries sometimes echo the URL or the AUTH arguments in their errors.
 */
export function scrub(text: string, target: Pick<RedisTarget, 'password' | 'url' | 'masked'>): string {
  let out = text.split(target.url).join(target.masked);
  const p = target.password;
  if (p) {
    for (const form of new Set([p, encodeURIComponent(p)])) out = out.split(form).join(MASK);
  }
  return out;
}

/** Whether a store string names Redis (`redis://` or `rediss://`). */
export function isRedisUrl(s: unknown): s is string {
  return typeof s === 'string' && /^rediss?:\/\//i.test(s);
}

/**
 * Whether a string is a mistyped Redis URL (`redis:/host:6379`, one slash; `redis:host`;
 * `redis//host`): the pattern checkStore (src/store/backends/open.ts) refuses as a store, which
 * the commands taking a URL or a tape path would otherwise read as a tape path that does not
 * exist.
 *
 * @example
 * isMistypedRedisUrl('redis:/127.0.0.1:6379') // true
 * isMistypedRedisUrl('redis://127.0.0.1:6379') // false
 */
export function isMistypedRedisUrl(s: unknown): boolean {
  return typeof s === 'string' && /^rediss?(?::\/?(?!\/)|\/\/)/i.test(s);
}

/**
 * Parses `redis://[user[:password]@]host[:port][/db]` and `rediss://` (TLS). Throws `E_ARG`
 * (with the URL masked) for anything else.
 *
 * @example
 * parseRedisUrl('rediss://:pw@cache.internal:6380/2').tls // true
 */
export function parseRedisUrl(url: string): RedisTarget {
  const bad = (why: string) =>
    new TapedeckError('E_ARG', `Invalid Redis URL ${maskRedisUrl(url)}: ${why}.`, {
      hint: 'Use redis://[user:password@]host[:port][/db], or rediss:// for TLS, e.g. redis://127.0.0.1:6379/0.',
    });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad('not a URL');
  }
  const scheme = u.protocol.toLowerCase();
  if (scheme !== 'redis:' && scheme !== 'rediss:') throw bad(`the scheme must be redis:// or rediss://, not ${u.protocol}//`);
  if (u.hostname === '') throw bad('no host');
  const path = u.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path)) throw bad(`the path must be a database number, not /${path}`);
  const port = u.port === '' ? 6379 : Number(u.port);
  const target: RedisTarget = {
    url,
    masked: maskRedisUrl(url),
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port,
    database: path === '' ? 0 : Number(path),
    tls: scheme === 'rediss:',
  };
  // A misspelt parameter (`?nmespace=`) silently meant the default namespace: another store.
  for (const name of new Set(u.searchParams.keys())) {
    if (!QUERY_PARAMETERS.includes(name)) throw bad(`unknown query parameter ${JSON.stringify(name)} (known: ${QUERY_PARAMETERS.map((q) => `?${q}=`).join(', ')})`);
    // `?namespace=t1&namespace=zz` was read as one of them, silently: which store is meant?
    const given = u.searchParams.getAll(name);
    if (given.length > 1) throw bad(`?${name}= is given ${given.length} times (${given.map((v) => JSON.stringify(v)).join(', ')}); give it once`);
  }
  // Checked where the URL is first read (createFetch, the proxy, the commands), not at the first
  // recording: a bad TTL was an HTTP 500 there, saying "NaN" (and a bad namespace, a 500 SDKs retried).
  const ns = u.searchParams.get('namespace');
  if (ns !== null && !NAMESPACE_RE.test(ns)) throw new TapedeckError('E_ARG', `Invalid Redis URL ${maskRedisUrl(url)}: ?namespace= must be a namespace, not ${JSON.stringify(ns)}.`, { hint: NAMESPACE_HINT });
  const ttl = u.searchParams.get('ttl');
  if (ttl !== null && !/^\d+(?:\.\d+)?$/.test(ttl)) throw bad(`?ttl= must be a number of seconds, 0 or more (0 keeps records forever), not ${JSON.stringify(ttl)}`);
  try {
    if (u.username !== '') target.username = decodeURIComponent(u.username);
    if (u.password !== '') target.password = decodeURIComponent(u.password);
  } catch {
    // A bare % that is not an escape: a URIError, which said nothing of the URL or the fix.
    throw new TapedeckError('E_ARG', `Invalid Redis URL ${target.masked}: the user name or password holds a % that is not a %XX escape.`, {
      url: target.masked,
      hint: 'Percent-encode the user name and password in the URL (% is %25, @ is %40, : is %3A, / is %2F), e.g. with encodeURIComponent.',
    });
  }
  return target;
}

/** Redis refusing the credentials (a wrong password or user, an ACL): no retry changes it. */
const AUTH_REFUSED = /WRONGPASS|NOAUTH|NOPERM|invalid password|invalid username|without any password configured/i;

/**
 * The one error of an unreachable or refusing Redis. The message names the masked URL, what
 * failed, and how to fix it; the raw cause is scrubbed of the password.
 */
export function storeUnavailable(target: RedisTarget, doing: string, cause: unknown, hint?: string, cluster = false, lasting = false): TapedeckError {
  // Redis's own messages may end in a full stop; the sentence below adds one.
  const why = scrub(cause instanceof Error ? cause.message || cause.name : String(cause), target).replace(/[.\s]+$/, '');
  const auth = AUTH_REFUSED.test(why);
  return new TapedeckError('E_STORE_UNAVAILABLE', `Redis store ${target.masked} is unavailable (${doing}): ${why}.`, {
    url: target.masked,
    // What no retry changes (a wrong password or ACL, the client package missing): the proxy and
    // createFetch answer it with a 4xx, which no SDK retries, instead of a 503 the AI SDK retried for 6 s.
    ...(auth || lasting ? { lasting: true } : {}),
    hint:
      hint ??
      (auth
        ? /without any password configured/i.test(why)
          ? // Redis answered: it has no password, and the URL gives one (often another environment's URL).
            'This Redis has no password set: remove the password from the URL (redis://host:port), or set one on the server (requirepass, or an ACL user).'
          : 'Check the user name and password in the URL (redis://user:password@host:port), or the server ACL.'
        : /^TRYAGAIN\b/.test(why)
          ? // Every node answered: the key's slot was moving between masters (resharding).
            `The key's hash slot was being migrated between masters of the Redis Cluster (resharding) for longer than the command deadline; no node is down. Try again once the migration has finished (redis-cli --cluster check ${target.host}:${target.port} shows open slots), or raise commandTimeoutMs to wait it out.`
          : downHint(target, why, cluster)),
  });
}

/**
 * How to fix an unreachable Redis, naming the node that did not answer when the error says which
 * (a cluster's failing node is often not the one in the URL, which may well be up); on a cluster
 * with no node named, no node is blamed.
 */
function downHint(target: RedisTarget, why: string, cluster: boolean): string {
  // rediss:// to a server that does not speak TLS: a plain Redis reads the TLS hello as a
  // command and never answers it, so the handshake times out (or fails on a plain-text reply).
  // "Start Redis there" and "use rediss://" sent the user who had written rediss:// astray.
  if (target.tls && /time(?:d)? ?out|wrong version number|packet length|unexpected eof|ssl|tls/i.test(why)) {
    // The URL to write is the user's own (user, password, database) with the scheme changed.
    const plain = typedRedisUrl(target.masked.replace(/^rediss:/i, 'redis:').replace(/\?.*$/, ''));
    return `The server at ${target.host}:${target.port} did not answer the TLS handshake: it may not speak TLS. For a plain Redis write ${plain}${passwordNote(plain)} (not rediss://); if it does serve TLS there, check the host, port and firewall.`;
  }
  // The server answered the handshake with a certificate Node does not trust (a private CA) or
  // that names another host: Redis is up, and restarting it changes nothing.
  if (target.tls && /altname|Hostname\/IP does not match/i.test(why)) {
    return `The server's certificate does not name ${target.host}: write the host name the certificate was made for in the URL (rediss://<that name>:${target.port}).`;
  }
  if (target.tls && /self[- ]signed|unable to (?:verify|get local issuer)|certificate chain|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(why)) {
    return `The server at ${target.host}:${target.port} answered with a certificate Node does not trust (a private CA?): trust its CA with NODE_EXTRA_CA_CERTS=ca.pem (the CLI too), or the option connect: { tls: { ca } } of RedisBackend.`;
  }
  // Named without a flag: createFetch takes the URL as an option, the tape commands as an
  // argument, `tapedeck serve` after --store.
  const tail = `check the host, port and firewall, or correct the Redis URL${target.tls ? '' : '; use rediss:// if the server requires TLS'}.`;
  const named = /\b(\d{1,3}(?:\.\d{1,3}){3}|localhost|\[[0-9A-Fa-f:]+\]):(\d{1,5})\b/.exec(why);
  if (named && (cluster || named[2] !== String(target.port))) return `Start Redis on ${named[1]}:${named[2]} (the node that did not answer; redis-server --port ${named[2]}), ${tail}`;
  if (cluster) return `A node of the Redis Cluster did not answer (not necessarily ${target.host}:${target.port}, which the URL names): check that every master is up (redis-cli --cluster check ${target.host}:${target.port}), ${tail}`;
  return `Start Redis there (redis-server --port ${target.port}), ${tail}`;
}

/** The slice of node-redis we use: raw commands routed by their first key. */
export interface RedisConnection {
  readonly target: RedisTarget;
  readonly cluster: boolean;
  /** Sends one command; `key` routes it in a cluster. Replies keep binary strings as Buffers. */
  send(key: string | undefined, args: (string | Buffer)[]): Promise<unknown>;
  /**
   * Sends a command about the connection itself (`CLIENT ID`, `CLIENT LIST`) on the connection
   * that carries `key`'s commands: a cluster client would send a keyless command to any node.
   */
  sendOnNode(key: string, args: string[]): Promise<unknown>;
  /**
   * Every key matching a SCAN pattern, on every master of a cluster (a keyless SCAN goes to one
   * node only). Costs a pass over the whole keyspace: for diagnosis, never on a hot path.
   */
  scan(pattern: string): Promise<string[]>;
  /** True while commands can be sent. */
  readonly ready: boolean;
  close(): Promise<void>;
}

/**
 * How a Redis store connects: timeouts and TLS (RedisBackend's `connect` option, and the
 * connection of a test tape's or createFetch's `store` given as options).
 *
 * @example
 * const connect: ConnectOptions = { connectTimeoutMs: 2000, tls: { ca: readFileSync('ca.pem') } }
 * new RedisBackend('rediss://cache.internal:6380', { namespace: 'my-app', connect })
 */
export interface ConnectOptions {
  /** Give up connecting after this long (default 5000 ms). */
  connectTimeoutMs?: number;
  /**
   * Fail a command that has no answer after this long (default 5000 ms), also one already sent
   * to a server that stopped answering: E_STORE_UNAVAILABLE saying Redis did not answer.
   */
  commandTimeoutMs?: number;
  /** Extra TLS options (say `{ ca }` for a private CA) passed to node:tls for rediss:// URLs. */
  tls?: Record<string, unknown>;
}

type NodeRedis = {
  createClient(opts: unknown): NodeRedisClient;
  createCluster(opts: unknown): NodeRedisClient;
  /** Absent before node-redis 5. */
  RESP_TYPES?: Record<string, number>;
};
type NodeRedisClient = {
  on(ev: string, fn: (e: unknown, info?: unknown) => void): void;
  connect(): Promise<unknown>;
  destroy?(): void;
  close?(): Promise<void>;
  quit?(): Promise<void>;
  isReady?: boolean;
  /** A single-node client's socket: held open for the process, or not (a cluster client has neither: its nodes' clients do). */
  ref?(): void;
  unref?(): void;
  sendCommand(...args: unknown[]): Promise<unknown>;
  /** Cluster only, in node-redis versions that have it: the client of the master for a key's slot. */
  getNodeClientForKey?(key: string, isReadonly: boolean): Promise<NodeRedisClient> | NodeRedisClient;
  /** Cluster only: the masters and replicas (each with its client once connected), and the client of one of them. */
  readonly masters?: readonly unknown[];
  readonly replicas?: readonly unknown[];
  nodeClient?(node: unknown): Promise<NodeRedisClient> | NodeRedisClient;
};

let loaded: Promise<NodeRedis> | undefined;

/**
 * node-redis, imported on first use (the CommonJS bundle for jest requires it: scripts/build.mjs);
 * a failure is E_STORE_UNAVAILABLE with the fix for its cause.
 */
async function loadClient(target: RedisTarget): Promise<NodeRedis> {
  loaded ??= import('redis' as string).then((m: unknown) => ((m as { default?: NodeRedis }).default?.createClient ? (m as { default: NodeRedis }).default : (m as NodeRedis)));
  let lib: NodeRedis;
  try {
    lib = await loaded;
  } catch (e) {
    loaded = undefined;
    throw storeUnavailable(target, 'loading the Redis client', e, loadHint(e), false, true);
  }
  // node-redis 4 has no RESP type mapping (RESP_TYPES came with 5), which the store reads
  // binary values with: it failed later with a bare TypeError.
  if (typeof lib.RESP_TYPES?.BLOB_STRING !== 'number') {
    loaded = undefined;
    const found = await installedVersion();
    const cause = new Error(`the node-redis client installed (${found === undefined ? 'the redis package' : `node-redis ${found}`}) is too old: the Redis store needs node-redis 5 or 6`);
    throw storeUnavailable(target, 'loading the Redis client', cause, 'Install a supported client: npm install redis@6 (or redis@5).', false, true);
  }
  return lib;
}

/** The version of the redis package found, for the message about an unsupported one; undefined when it cannot be read. */
async function installedVersion(): Promise<string | undefined> {
  try {
    const pkg = (await import('redis/package.json' as string, { with: { type: 'json' } })) as { default?: { version?: unknown }; version?: unknown };
    const v = pkg.default?.version ?? pkg.version;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fix for a client that did not load. Installing it is the fix only when it is missing: a
 * client that is there but fails to load (a runtime refusing import(), a broken install) was
 * told to be installed again, which changed nothing.
 */
function loadHint(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') return 'The Redis store needs the node-redis client: npm install redis';
  if (code === 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG') {
    return "The node-redis client is installed, but this runtime (jest's) refuses import(): load tapedeck through llm-tapedeck/jest, its CommonJS build, or run jest with node --experimental-vm-modules.";
  }
  return 'The node-redis client (the redis package) is installed but failed to load, for the reason above: fix or reinstall it (npm install redis@6, or redis@5).';
}

/**
 * Opens a connection (single node or cluster: asked with `INFO cluster`, so the same URL form
 * works for both). Fails fast: a Redis that is down at start is `E_STORE_UNAVAILABLE`, never a
 * hang. Afterwards commands are not queued while the connection is down (they fail at once with
 * E_STORE_UNAVAILABLE) and the client reconnects in the background.
 *
 * @example
 * const conn = await connectRedis(parseRedisUrl('redis://127.0.0.1:6379/0'))
 */
export async function connectRedis(target: RedisTarget, opts: ConnectOptions = {}): Promise<RedisConnection> {
  const lib = await loadClient(target);
  const connectTimeout = opts.connectTimeoutMs ?? 5000;
  const commandTimeout = opts.commandTimeoutMs ?? 5000;
  const socket = {
    host: target.host,
    port: target.port,
    connectTimeout,
    ...(target.tls ? { tls: true, ...(opts.tls ?? {}) } : {}),
    // Reconnect with backoff (up to 1 s apart) for as long as the store is open.
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000),
  };
  const common = {
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    disableOfflineQueue: true,
    commandOptions: { timeout: commandTimeout },
    RESP: 2,
  };
  const typeMapping = { [lib.RESP_TYPES!.BLOB_STRING!]: Buffer };

  // First a plain client with no reconnects: it tells us whether the server is reachable at
  // all (failing fast), whether the credentials work, and whether it is a cluster node.
  const probe = lib.createClient({ ...common, socket: { ...socket, reconnectStrategy: false } });
  let probeError: unknown;
  probe.on('error', (e) => (probeError ??= e));
  let clusterMode = false;
  let noDatabase: TapedeckError | undefined;
  try {
    await withTimeout(probe.connect(), connectTimeout + 1000, 'connect');
    clusterMode = await isCluster(probe, commandTimeout);
    if (!clusterMode && target.database !== 0) noDatabase = await missingDatabase(probe, target, commandTimeout);
  } catch (e) {
    const cause = probeError ?? e;
    throw (await notRedis(target, cause, connectTimeout, opts.tls)) ?? storeUnavailable(target, 'connecting', cause);
  } finally {
    destroy(probe);
  }
  if (noDatabase) throw noDatabase;
  if (clusterMode && target.database !== 0) {
    throw new TapedeckError('E_ARG', `Redis store ${target.masked}: a Redis Cluster has only database 0, the URL asks for ${target.database}.`, {
      url: target.masked,
      hint: 'Drop the /db part of the URL, or use a namespace to separate projects.',
    });
  }
  if (!clusterMode) {
    // The long-lived client reconnects on its own after a loss (the probe never does).
    const client = lib.createClient({ ...common, database: target.database, socket });
    return wrap(target, false, await connected(client, target, 'connecting', connectTimeout), typeMapping, commandTimeout);
  }
  const cluster = lib.createCluster({
    rootNodes: [{ socket: { host: target.host, port: target.port, ...(target.tls ? { tls: true, ...(opts.tls ?? {}) } : {}) } }],
    defaults: { ...common, socket },
    // The layout only: a master is connected when a key of its slots is first asked. Connecting
    // to every master first made one master down (a cluster serving the rest, with
    // cluster-require-full-coverage no) fail every open by the connect deadline, though the
    // namespace's own master answered.
    minimizeConnections: true,
  });
  return wrap(target, true, await connected(cluster, target, 'connecting to the cluster', connectTimeout, true), typeMapping, commandTimeout);
}

/**
 * E_STORE_UNAVAILABLE for a port served by something that is not Redis (the client fails on its
 * first reply byte, `Unknown RESP type 72 "H"`, which read as a Redis that was down, with the
 * hint to start one there). The first bytes the service sends are looked at on a socket of
 * their own, so the message can say what answers: an HTTP server when they start with `HTTP/`.
 * Undefined when the failure is not a reply Redis would never send. Costs a connection, on
 * this failure only.
 *
 * @example
 * throw (await notRedis(target, e, 5000)) ?? storeUnavailable(target, 'connecting', e)
 */
async function notRedis(target: RedisTarget, cause: unknown, ms: number, tlsOptions?: Record<string, unknown>): Promise<TapedeckError | undefined> {
  const why = cause instanceof Error ? cause.message : String(cause);
  if (!/Unknown RESP type|Protocol error/i.test(why)) return undefined;
  const bytes = await firstBytes(target, Math.min(ms, 2000), tlsOptions).catch(() => '');
  // Only what reads as text, up to the end of the first line, and short: it goes in a message.
  const line = bytes.split(/\r?\n/)[0]!.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
  const where = `${target.host}:${target.port}`;
  const what = line.startsWith('HTTP/')
    ? `the service at ${where} answered as an HTTP server, not Redis`
    : `the service at ${where} answered something that is not Redis (${line !== '' ? `its first bytes: ${JSON.stringify(line)}` : scrub(why, target).replace(/[.\s]+$/, '')})`;
  return new TapedeckError('E_STORE_UNAVAILABLE', `Redis store ${target.masked} is unavailable (connecting): ${what}.`, {
    url: target.masked,
    lasting: true,
    hint: `Check the port: ${where} is served by another program (Redis listens on 6379 unless told otherwise); correct the host or port in the Redis URL, or start Redis on a port of its own (redis-server --port PORT).`,
  });
}

/** The first bytes a service sends after a PING (an HTTP server answers it with an error page), as latin1 text. */
async function firstBytes(target: RedisTarget, ms: number, tlsOptions?: Record<string, unknown>): Promise<string> {
  const { connect } = await import('node:net');
  const tls = target.tls ? await import('node:tls') : undefined;
  return new Promise<string>((resolve) => {
    let got = Buffer.alloc(0);
    const sock = tls ? tls.connect({ host: target.host, port: target.port, servername: target.host, ...(tlsOptions ?? {}) }) : connect(target.port, target.host);
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(got.toString('latin1'));
    };
    const timer = setTimeout(done, ms);
    sock.on(tls ? 'secureConnect' : 'connect', () => sock.write('PING\r\n'));
    sock.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 64 || got.includes(10)) done();
    });
    sock.on('error', done);
    sock.on('close', done);
  });
}

/**
 * Whether the server is a cluster node. `INFO` is in the @dangerous ACL category, which a user
 * for an application often lacks (`+@all -@dangerous -@admin`): then `CLUSTER INFO`, which is
 * not, answers; a server without cluster support refuses it with an error that is not NOPERM.
 * A user allowed neither is taken to be on a single node (a cluster would then answer its
 * commands with MOVED, which is reported).
 */
async function isCluster(probe: NodeRedisClient, ms: number): Promise<boolean> {
  try {
    return /cluster_enabled:1/.test(String(await answered(probe.sendCommand(['INFO', 'cluster']), ms)));
  } catch (e) {
    if (!/NOPERM/.test(String((e as Error)?.message))) throw e;
  }
  try {
    return /cluster_state:/.test(String(await answered(probe.sendCommand(['CLUSTER', 'INFO']), ms)));
  } catch (e) {
    // An error Redis answered (node-redis names it SimpleError or ErrorReply), not a lost socket.
    if (/^(NOPERM|ERR)\b/.test(String((e as Error)?.message))) return false;
    throw e;
  }
}

/**
 * E_ARG when the URL's database is not one the server has (`redis://host/16` where the server
 * keeps the default 16, numbered 0 to 15): Redis answers "DB index is out of range", which read
 * as an unreachable server with a hint to start one. The count comes from `CONFIG GET
 * databases` when the user may ask it.
 */
async function missingDatabase(probe: NodeRedisClient, target: RedisTarget, ms: number): Promise<TapedeckError | undefined> {
  try {
    await answered(probe.sendCommand(['SELECT', String(target.database)]), ms);
    return undefined;
  } catch (e) {
    if (!/DB index is out of range|invalid DB index/i.test(String((e as Error)?.message))) throw e;
  }
  let count: number | undefined;
  try {
    const reply = (await answered(probe.sendCommand(['CONFIG', 'GET', 'databases']), ms)) as unknown[];
    const n = Number(String(reply?.[1]));
    if (Number.isInteger(n) && n > 0) count = n;
  } catch {
    // CONFIG is @admin: a user without it is told without the count.
  }
  // The user's URL (user, password's place, scheme) with database 0, which every server has.
  const database0 = typedRedisUrl(`${target.masked.replace(/\?.*$/, '').replace(/\/\d*$/, '')}/0`);
  const has = count === undefined ? 'fewer databases' : `${count} database${count === 1 ? '' : 's'}, numbered 0 to ${count - 1} by its databases setting`;
  return new TapedeckError('E_ARG', `Redis store ${target.masked}: database ${target.database} does not exist on this server (it has ${has}).`, {
    url: target.masked,
    hint: `Use a database the server has in the URL, as in ${database0}${passwordNote(database0)}, or a namespace (?namespace=NAME) to keep projects apart; more databases need the server's databases setting raised.`,
  });
}

/**
 * Connects a long-lived client or cluster; on failure destroys it and throws E_STORE_UNAVAILABLE
 * with the first error it emitted (more telling than the timeout that follows it).
 */
async function connected(c: NodeRedisClient, target: RedisTarget, doing: string, connectTimeout: number, cluster = false): Promise<NodeRedisClient> {
  let firstError: unknown;
  c.on('error', (e: unknown) => (firstError ??= e));
  try {
    await withTimeout(c.connect(), connectTimeout + 1000, 'connect');
  } catch (e) {
    destroy(c);
    throw storeUnavailable(target, doing, firstError ?? e, undefined, cluster);
  }
  return c;
}

function destroy(c: NodeRedisClient): void {
  try {
    c.destroy?.();
  } catch {
    // already gone
  }
}

/** Whether `e` is Redis's TRYAGAIN reply (a cluster slot being migrated). */
const tryAgain = (e: unknown): boolean => /^TRYAGAIN\b/.test(String((e as Error | undefined)?.message ?? ''));

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      t.unref();
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * The deadline of one command. node-redis's own `timeout` only covers a command still waiting
 * to be written: one already on the wire to a server that stopped answering (SIGSTOP, a frozen
 * VM, a dead peer whose socket stays open) waited forever, and so did the request behind it.
 * The late reply, if it ever comes, is dropped.
 */
function answered<T>(p: Promise<T>, ms: number): Promise<T> {
  p.catch(() => {});
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      t = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms (commandTimeoutMs)`)), ms);
      t.unref();
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * Keeps the client's sockets from holding the process open while no command is in flight: a
 * script that opened a Redis store and never closed it (a replay cache reads everything at open
 * and asks nothing more) otherwise never exited, where the same script on a tape file did.
 * Returns `hold`, called as a command starts; the function it returns is called when the command
 * is done. The sockets are referenced again for each command, so nothing the program awaits or
 * was told is stored is lost at exit; they are released a turn of the event loop after the last
 * one, so the next command of a put or a load, sent as the previous one's answer is read, finds
 * them still held. A cluster client has no socket of its own: its masters' and replicas' clients
 * (connected as their slots are first asked, so new ones may appear during a command) are held
 * and released together.
 */
function idleUnref(client: NodeRedisClient, closed: () => boolean): () => () => void {
  const sockets = socketsOf(client);
  if (sockets === undefined) return () => () => {};
  let inFlight = 0;
  let release: NodeJS.Immediate | undefined;
  for (const c of sockets()) c.unref!();
  return () => {
    if (inFlight++ === 0) {
      if (release !== undefined) clearImmediate(release);
      else for (const c of sockets()) c.ref!();
      release = undefined;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--inFlight > 0 || closed()) return;
      release = setImmediate(() => {
        release = undefined;
        if (inFlight === 0 && !closed()) for (const c of sockets()) c.unref!();
      });
    };
  };
}

/**
 * The clients whose sockets can hold the process: a single node's own, or a cluster's node
 * clients as they are at the time asked; undefined for a client that cannot be released (no
 * ref/unref in this node-redis version).
 */
function socketsOf(client: NodeRedisClient): (() => NodeRedisClient[]) | undefined {
  const releasable = (c: NodeRedisClient | undefined): c is NodeRedisClient => typeof c?.ref === 'function' && typeof c.unref === 'function';
  if (typeof client.ref === 'function' && typeof client.unref === 'function') return () => [client];
  if (!Array.isArray(client.masters)) return undefined;
  const nodes = () => [...(client.masters ?? []), ...(client.replicas ?? [])] as { client?: NodeRedisClient }[];
  return () => nodes().map((n) => n.client).filter(releasable);
}

function wrap(target: RedisTarget, cluster: boolean, client: NodeRedisClient, typeMapping: object, commandTimeout: number): RedisConnection {
  // Background reconnect errors are expected while Redis is away; commands report them. A
  // reconnect Redis refused (the password rotated, the ACL changed) is kept until the next one
  // succeeds: the commands meanwhile fail with only "The client is offline", which told the user
  // to start a Redis that was running.
  let refused: unknown;
  const noteRefusal = (e: unknown) => {
    if (AUTH_REFUSED.test(String((e as Error | undefined)?.message ?? ''))) refused = e;
  };
  // A cluster's masters that failed to connect, by address, until they are ready: a command to
  // one of them waits out its deadline, whose error names no node (a master is connected when
  // its slots are first asked), so the error says which it was waiting for.
  const down = new Map<string, Error>();
  const nodeOf = (info: unknown): string => {
    const n = info as { host?: unknown; port?: unknown } | undefined;
    return `${String(n?.host)}:${String(n?.port)}`;
  };
  client.on('error', noteRefusal);
  client.on('node-error', (e: unknown, info: unknown) => {
    noteRefusal(e);
    if (e instanceof Error && /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ECONNRESET|timeout/i.test(e.message)) down.set(nodeOf(info), e);
  });
  client.on('ready', () => (refused = undefined));
  client.on('node-ready', (info: unknown) => {
    refused = undefined;
    down.delete(nodeOf(info));
  });
  let closed = false;
  const options = { typeMapping };
  const hold = idleUnref(client, () => closed);
  const failed = (args: (string | Buffer)[], e: unknown): TapedeckError => {
    if (e instanceof TapedeckError) return e;
    // Errors Redis itself answered (a script error, WRONGTYPE) are not "unavailable".
    const name = (e as { name?: string } | undefined)?.name ?? '';
    if (refused !== undefined && name !== 'ErrorReply') return storeUnavailable(target, `running ${String(args[0])}; reconnecting`, refused, undefined, cluster);
    if (name === 'ErrorReply' && !/NOAUTH|WRONGPASS|NOPERM|LOADING|CLUSTERDOWN|MASTERDOWN|TRYAGAIN/.test(String((e as Error).message))) {
      return new TapedeckError('E_STORE', `Redis store ${target.masked} refused ${String(args[0])}: ${scrub((e as Error).message, target)}.`, {
        url: target.masked,
        hint: 'This is a bug or a Redis server too old for tapedeck (Redis 6.2 or newer is needed); please report it.',
      });
    }
    // A deadline passed on a cluster with a master down: that is the node it waited for.
    const waited = cluster && down.size > 0 && !/:\d{1,5}\b/.test(String((e as Error | undefined)?.message ?? e)) ? [...down.values()][0]! : undefined;
    return storeUnavailable(target, `running ${String(args[0])}`, waited ? new Error(`${(e as Error | undefined)?.message ?? String(e)}; ${waited.message}`) : e, undefined, cluster);
  };
  /**
   * A cluster answers TRYAGAIN to a multi-key command while the keys' slot is being migrated
   * and only some of them have moved: it means "retry shortly", not a lost node. Sent again
   * with a growing pause, within the command's deadline (counted from the first TRYAGAIN,
   * which comes at once: the usual path reads no clock); only then is it an error, saying the
   * slot was being migrated.
   */
  const retried = async (key: string | undefined, args: (string | Buffer)[], first: unknown): Promise<unknown> => {
    const started = Date.now();
    let last = first;
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const left = started + commandTimeout - Date.now();
      if (left <= pause) break;
      await new Promise((r) => setTimeout(r, pause));
      try {
        return await answered(client.sendCommand(key, false, args, options), started + commandTimeout - Date.now());
      } catch (e) {
        last = e;
        if (!tryAgain(e)) break;
      }
    }
    throw failed(args, last);
  };
  return {
    target,
    cluster,
    get ready() {
      return !closed && client.isReady !== false;
    },
    async send(key, args) {
      const release = hold();
      try {
        return await answered(cluster ? client.sendCommand(key, false, args, options) : client.sendCommand(args, options), commandTimeout);
      } catch (e) {
        if (cluster && tryAgain(e)) return await retried(key, args, e);
        throw failed(args, e);
      } finally {
        release();
      }
    },
    async sendOnNode(key, args) {
      const release = hold();
      try {
        if (!cluster) return await answered(client.sendCommand(args, options), commandTimeout);
        if (!client.getNodeClientForKey) throw new Error('this node-redis cluster client cannot name the node of a key');
        return await answered(Promise.resolve(client.getNodeClientForKey(key, false)).then((c) => c.sendCommand(args, options)), commandTimeout);
      } catch (e) {
        throw failed(args, e);
      } finally {
        release();
      }
    },
    async scan(pattern) {
      const found: string[] = [];
      const release = hold();
      try {
        let nodes: NodeRedisClient[] = [client];
        if (cluster) {
          if (!client.masters || !client.nodeClient) throw new Error('this node-redis cluster client cannot list its masters');
          nodes = await Promise.all(client.masters.map((m) => Promise.resolve(client.nodeClient!(m))));
        }
        for (const node of nodes) {
          let cursor = '0';
          do {
            const [next, keys] = (await answered(node.sendCommand(['SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000'], options), commandTimeout)) as [Buffer, Buffer[]];
            cursor = String(next);
            for (const k of keys) found.push(String(k));
          } while (cursor !== '0');
        }
      } catch (e) {
        throw failed(['SCAN'], e);
      } finally {
        release();
      }
      return [...new Set(found)];
    },
    async close() {
      if (closed) return;
      // Held while it says goodbye: an awaited close() on a released socket let the process
      // exit before Redis answered, and the code after the await never ran.
      const release = hold();
      closed = true;
      try {
        if (client.close) await client.close();
        else if (client.quit) await client.quit();
      } catch {
        destroy(client);
      } finally {
        release();
      }
    },
  };
}
