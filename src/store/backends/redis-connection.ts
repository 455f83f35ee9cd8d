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
  if (u.username !== '') target.username = decodeURIComponent(u.username);
  if (u.password !== '') target.password = decodeURIComponent(u.password);
  return target;
}

/**
 * The one error of an unreachable or refusing Redis. The message names the masked URL, what
 * failed, and how to fix it; the raw cause is scrubbed of the password.
 */
export function storeUnavailable(target: RedisTarget, doing: string, cause: unknown, hint?: string): TapedeckError {
  const why = scrub(cause instanceof Error ? cause.message || cause.name : String(cause), target);
  const auth = /WRONGPASS|NOAUTH|NOPERM|invalid password|invalid username/i.test(why);
  return new TapedeckError('E_STORE_UNAVAILABLE', `Redis store ${target.masked} is unavailable (${doing}): ${why}.`, {
    url: target.masked,
    hint:
      hint ??
      (auth
        ? 'Check the user name and password in the URL (redis://user:password@host:port), or the server ACL.'
        : `Start Redis there (redis-server --port ${target.port}), check the host, port and firewall, or pass another --store URL; use rediss:// if the server requires TLS.`),
  });
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
  /** True while commands can be sent. */
  readonly ready: boolean;
  close(): Promise<void>;
}

/** Options of {@link connectRedis}. */
export interface ConnectOptions {
  /** Give up connecting after this long (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Fail a command that has no answer after this long (default 5000 ms). */
  commandTimeoutMs?: number;
  /** Extra TLS options (say `{ ca }` for a private CA) passed to node:tls for rediss:// URLs. */
  tls?: Record<string, unknown>;
}

type NodeRedis = {
  createClient(opts: unknown): NodeRedisClient;
  createCluster(opts: unknown): NodeRedisClient;
  RESP_TYPES: Record<string, number>;
};
type NodeRedisClient = {
  on(ev: string, fn: (e: unknown) => void): void;
  connect(): Promise<unknown>;
  destroy?(): void;
  close?(): Promise<void>;
  quit?(): Promise<void>;
  isReady?: boolean;
  sendCommand(...args: unknown[]): Promise<unknown>;
  /** Cluster only, in node-redis versions that have it: the client of the master for a key's slot. */
  getNodeClientForKey?(key: string, isReadonly: boolean): Promise<NodeRedisClient> | NodeRedisClient;
};

let loaded: Promise<NodeRedis> | undefined;

/** node-redis, imported on first use; a missing package is E_STORE_UNAVAILABLE with the fix. */
async function loadClient(target: RedisTarget): Promise<NodeRedis> {
  loaded ??= import('redis' as string).then((m: unknown) => ((m as { default?: NodeRedis }).default?.createClient ? (m as { default: NodeRedis }).default : (m as NodeRedis)));
  try {
    return await loaded;
  } catch (e) {
    loaded = undefined;
    throw storeUnavailable(target, 'loading the Redis client', e, 'The Redis store needs the node-redis client: npm install redis');
  }
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
  const typeMapping = { [lib.RESP_TYPES.BLOB_STRING!]: Buffer };

  // First a plain client with no reconnects: it tells us whether the server is reachable at
  // all (failing fast), whether the credentials work, and whether it is a cluster node.
  const probe = lib.createClient({ ...common, socket: { ...socket, reconnectStrategy: false } });
  let probeError: unknown;
  probe.on('error', (e) => (probeError ??= e));
  let clusterMode = false;
  try {
    await withTimeout(probe.connect(), connectTimeout + 1000, 'connect');
    const info = String(await probe.sendCommand(['INFO', 'cluster']));
    clusterMode = /cluster_enabled:1/.test(info);
  } catch (e) {
    throw storeUnavailable(target, 'connecting', probeError ?? e);
  } finally {
    destroy(probe);
  }
  if (clusterMode && target.database !== 0) {
    throw new TapedeckError('E_ARG', `Redis store ${target.masked}: a Redis Cluster has only database 0, the URL asks for ${target.database}.`, {
      url: target.masked,
      hint: 'Drop the /db part of the URL, or use a namespace to separate projects.',
    });
  }
  if (!clusterMode) {
    // The long-lived client reconnects on its own after a loss (the probe never does).
    const client = lib.createClient({ ...common, database: target.database, socket });
    return wrap(target, false, await connected(client, target, 'connecting', connectTimeout), typeMapping);
  }
  const cluster = lib.createCluster({
    rootNodes: [{ socket: { host: target.host, port: target.port, ...(target.tls ? { tls: true, ...(opts.tls ?? {}) } : {}) } }],
    defaults: { ...common, socket },
  });
  return wrap(target, true, await connected(cluster, target, 'connecting to the cluster', connectTimeout), typeMapping);
}

/**
 * Connects a long-lived client or cluster; on failure destroys it and throws E_STORE_UNAVAILABLE
 * with the first error it emitted (more telling than the timeout that follows it).
 */
async function connected(c: NodeRedisClient, target: RedisTarget, doing: string, connectTimeout: number): Promise<NodeRedisClient> {
  let firstError: unknown;
  c.on('error', (e: unknown) => (firstError ??= e));
  try {
    await withTimeout(c.connect(), connectTimeout + 1000, 'connect');
  } catch (e) {
    destroy(c);
    throw storeUnavailable(target, doing, firstError ?? e);
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

function wrap(target: RedisTarget, cluster: boolean, client: NodeRedisClient, typeMapping: object): RedisConnection {
  // Background reconnect errors are expected while Redis is away; commands report them.
  client.on('error', () => {});
  let closed = false;
  const options = { typeMapping };
  const failed = (args: (string | Buffer)[], e: unknown): TapedeckError => {
    if (e instanceof TapedeckError) return e;
    // Errors Redis itself answered (a script error, WRONGTYPE) are not "unavailable".
    const name = (e as { name?: string } | undefined)?.name ?? '';
    if (name === 'ErrorReply' && !/NOAUTH|WRONGPASS|NOPERM|LOADING|CLUSTERDOWN|MASTERDOWN|TRYAGAIN/.test(String((e as Error).message))) {
      return new TapedeckError('E_STORE', `Redis store ${target.masked} refused ${String(args[0])}: ${scrub((e as Error).message, target)}.`, {
        url: target.masked,
        hint: 'This is a bug or a Redis server too old for tapedeck (Redis 6.2 or newer is needed); please report it.',
      });
    }
    return storeUnavailable(target, `running ${String(args[0])}`, e);
  };
  return {
    target,
    cluster,
    get ready() {
      return !closed && client.isReady !== false;
    },
    async send(key, args) {
      try {
        return cluster ? await client.sendCommand(key, false, args, options) : await client.sendCommand(args, options);
      } catch (e) {
        throw failed(args, e);
      }
    },
    async sendOnNode(key, args) {
      try {
        if (!cluster) return await client.sendCommand(args, options);
        if (!client.getNodeClientForKey) throw new Error('this node-redis cluster client cannot name the node of a key');
        return await (await client.getNodeClientForKey(key, false)).sendCommand(args, options);
      } catch (e) {
        throw failed(args, e);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        if (client.close) await client.close();
        else if (client.quit) await client.quit();
      } catch {
        destroy(client);
      }
    },
  };
}
