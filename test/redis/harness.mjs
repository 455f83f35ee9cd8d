// Real redis-server processes for the Redis suites and the Redis benchmark rows: a single node or
// a 3-master cluster on free loopback ports, each in its own temp directory, waited for until
// they answer, and torn down afterwards (also when a test fails or the process exits early).
//
// Plain JavaScript so that bench/ (run by plain node) and the vitest suites share it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What to install when redis-server is missing (Debian's package, which .ci/run installs). */
export const INSTALL_HINT = 'install the Debian package: apt-get install -y redis-server (it brings redis-cli)';

/**
 * Set by .ci/run: a Redis suite that would be skipped fails instead, so CI cannot go green
 * without having run them.
 */
export const REQUIRE_ENV = 'TAPEDECK_REQUIRE_REDIS';

/**
 * Why the real-Redis suites cannot run here (one line), or null when they can.
 *
 * @example
 * const why = redisMissing(); if (why) console.log(`skipped: ${why}`)
 */
export function redisMissing() {
  for (const bin of ['redis-server', 'redis-cli']) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (r.error || r.status !== 0) return `${bin} not found: ${INSTALL_HINT}`;
  }
  return null;
}

/** Every process started here, so an early exit still stops them. */
const live = new Set();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function portFree(port) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A loopback port that is free, and whose cluster bus port (port + 10000) is free too. Random in
 * 20000..45000, so parallel suites rarely collide; a collision still only costs a retry, because
 * start() checks that the server it started is the one answering.
 */
async function freePort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 25000);
    if ((await portFree(port)) && (await portFree(port + 10000))) return port;
  }
}

/**
 * One RESP command over a fresh socket; resolves the raw reply text (enough for readiness).
 * `password` is AUTH's argument: a password, or `[user, password]`.
 */
export function rawCommand(port, args, { password, ca } = {}) {
  return new Promise((resolve, reject) => {
    const sock = ca ? tlsConnect({ port, host: '127.0.0.1', ca }) : connect(port, '127.0.0.1');
    const enc = (a) => `*${a.length}\r\n${a.map((x) => `$${Buffer.byteLength(String(x))}\r\n${x}\r\n`).join('')}`;
    let out = '';
    sock.setTimeout(2000, () => sock.destroy(new Error('timeout')));
    sock.on(ca ? 'secureConnect' : 'connect', () => sock.write((password ? enc(['AUTH', ...[password].flat()]) : '') + enc(args)));
    sock.on('data', (d) => {
      out += d.toString('latin1');
      const replies = out.split('\r\n').length - 1;
      // AUTH answers one line first; the command's reply is enough for what we ask (PING, INFO).
      if (replies >= (password ? 2 : 1) && (!out.includes('$') || out.endsWith('\r\n'))) {
        sock.end();
        resolve(out);
      }
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(out));
  });
}

async function waitReady(port, child, opts, what) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before answering: ${child.stderrText()}`);
    const reply = await rawCommand(port, ['PING'], opts).catch(() => '');
    if (reply.includes('+PONG')) return;
    if (Date.now() > deadline) throw new Error(`${what} on port ${port} did not answer PING within 20 s: ${child.stderrText()}`);
    await sleep(25);
  }
}

function launch(dir, port, extra) {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning', ...extra];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => (text = (text + d).slice(-4000)));
  child.stderr.on('data', (d) => (text = (text + d).slice(-4000)));
  child.stderrText = () => text.trim();
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function stopChild(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Launches a server on a free port and waits until it answers. Between the check that a port is
 * free and redis-server binding it, any process may take it (or the cluster bus port + 10000,
 * which lies in the range the OS hands out to outgoing connections): a server that exits because
 * its address is in use is started again on another port, a few times.
 */
async function launchOnFreePort(start, authOpts, what) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = start(port);
    try {
      await waitReady(port, child, authOpts, what);
      return { port, child };
    } catch (e) {
      await stopChild(child, 'SIGKILL');
      if (attempt >= 5 || !/Address already in use/.test(`${e.message} ${child.stderrText()}`)) throw e;
    }
  }
}

/**
 * A private CA and a server certificate for 127.0.0.1, made with the openssl command line, so
 * `rediss://` is tested against a real TLS listener. Returns the file paths and the CA's PEM.
 */
function makeCertificates(dir) {
  const run = (args) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=tapedeck test CA', '-days', '2']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext']);
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key'), caPem: readFileSync(join(dir, 'ca.crt'), 'utf8') };
}

/**
 * Starts one redis-server on a free loopback port (no persistence) and waits until it answers.
 * `tls` serves TLS only (`rediss://`, a private CA: `ca`, `caFile`). `password` turns on `requirepass`; `user`/`password` together add an ACL user; `args` are more
 * redis-server arguments (say `['--appendonly', 'yes']`; later ones win).
 *
 * @example
 * const redis = await startRedis(); try { ... redis.url ... } finally { await redis.stop() }
 */
export async function startRedis({ password, user, args = [], tls = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-'));
  const extra = [...args];
  // TLS only: the plain port is closed, the TLS port is the one handed out.
  const certs = tls ? makeCertificates(dir) : undefined;
  if (password && !user) extra.push('--requirepass', password);
  if (password && user) extra.push('--user', `${user}`, 'on', `>${password}`, '~*', '&*', '+@all', '--user', 'default', 'off');
  const tlsArgs = (p) => (certs ? ['--tls-port', String(p), '--tls-cert-file', certs.cert, '--tls-key-file', certs.key, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no'] : []);
  const auth = password ? (user ? [user, password] : password) : undefined;
  const authOpts = { password: auth, ca: certs?.caPem };
  let port;
  let child;
  try {
    ({ port, child } = await launchOnFreePort((p) => launch(dir, certs ? 0 : p, [...extra, ...tlsArgs(p)]), authOpts, 'redis-server'));
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  extra.push(...tlsArgs(port));
  const cred = password ? `${encodeURIComponent(user ?? '')}:${encodeURIComponent(password)}@` : '';
  const handle = {
    port,
    dir,
    url: `${certs ? 'rediss' : 'redis'}://${cred}127.0.0.1:${port}`,
    /** The CA certificate (PEM) that signed a TLS server's certificate. */
    ca: certs?.caPem,
    caFile: certs?.ca,
    /** The server process (for `kill -9` tests). */
    get pid() {
      return child.pid;
    },
    /** kill -9: the server vanishes mid-run, as a crash or a lost network would look. */
    kill: () => stopChild(child, 'SIGKILL'),
    /** Starts the server again on the same port (empty: there is no persistence). */
    async restart() {
      await stopChild(child, 'SIGKILL');
      child = launch(dir, certs ? 0 : port, extra);
      await waitReady(port, child, authOpts, 'redis-server');
    },
    async stop() {
      await stopChild(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

/**
 * Starts a 3-master Redis Cluster (no replicas) on free loopback ports, each node in its own temp
 * directory, created with `redis-cli --cluster create`, and waits until every node reports
 * `cluster_state:ok`. `url` is one node's; cluster clients discover the rest.
 *
 * @example
 * const cluster = await startRedisCluster(); try { ... cluster.nodes ... } finally { await cluster.stop() }
 */
export async function startRedisCluster() {
  const nodes = [];
  const stopAll = async () => {
    await Promise.all(nodes.filter((n) => n.child).map((n) => stopChild(n.child, 'SIGKILL')));
    for (const n of nodes) rmSync(n.dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const dir = mkdtempSync(join(tmpdir(), `tapedeck-redis-cluster${i}-`));
      const node = { dir, port: 0, child: undefined };
      nodes.push(node);
      const started = await launchOnFreePort((p) => {
        // A failed attempt may have left a nodes.conf behind: each attempt starts clean.
        rmSync(join(dir, 'nodes.conf'), { force: true });
        return launch(dir, p, ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-node-timeout', '5000']);
      }, {}, 'redis-server (cluster node)');
      node.port = started.port;
      node.child = started.child;
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8', timeout: 60_000 });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (${create.status}): ${(create.stdout + create.stderr).slice(-2000)}`);
    const deadline = Date.now() + 30_000;
    for (const n of nodes) {
      for (;;) {
        const info = await rawCommand(n.port, ['CLUSTER', 'INFO']).catch(() => '');
        if (info.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${n.port} not ok after 30 s: ${info}`);
        await sleep(50);
      }
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  return {
    nodes: nodes.map((n) => ({ port: n.port, url: `redis://127.0.0.1:${n.port}` })),
    url: `redis://127.0.0.1:${nodes[0].port}`,
    /** kill -9 every node. */
    kill: () => Promise.all(nodes.map((n) => stopChild(n.child, 'SIGKILL'))),
    /** kill -9 one master (no replicas: its slots are gone until the cluster fails over, which it cannot). */
    killNode: (i) => stopChild(nodes[i].child, 'SIGKILL'),
    stop: stopAll,
  };
}
