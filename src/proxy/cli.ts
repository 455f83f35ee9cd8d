/**
 * `tapedeck serve`: the record/replay proxy from the command line.
 */
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { argsError, dashValues } from '../cli-args.ts';
import { EXIT, formatCliError, reportCliError } from '../cli-errors.ts';
import { maskRedisUrl } from '../store/backends/redis-connection.ts';
import type { Timing } from './deck.ts';
import { TAPE_MODES, type TapeMode } from '../store/mode.ts';
import { startProxy, type ServeOptions } from './server.ts';
import { upstreamTarget } from './upstream.ts';
import { redactor } from '../store/redact.ts';
import { proxyVariableFor } from './env-proxy.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './timeouts.ts';
import { DurableReplayStore } from '../replay/durable.ts';
import { loadHooksModule } from './hooks-module.ts';
import { ReplayStore } from '../replay/store.ts';
import { tlsMaterial } from './tls.ts';
import { checkServeStore } from './serve-store-arg.ts';
import { parseChaosSpec, type ChaosOptions } from '../chaos/options.ts';

/**
 * The upstream as the startup line shows it (CI logs keep it): without its user and password
 * (sent as `Authorization: Basic`), and with secret query parameters (`?api_key=`, `?token=`)
 * masked as a recorded URL's are.
 *
 * @example
 * shownUpstream('http://u:pw@host/base?api_key=k1&v=2') // 'http://host/base?api_key=%5BREDACTED%5D&v=2'
 */
function shownUpstream(upstream: string): string {
  return redactor().url(upstreamTarget(upstream).base);
}

export const SERVE_HELP = `Usage: tapedeck serve --upstream URL --tape FILE [options]

Record and replay HTTP calls to an LLM API. Point the client's base URL at the proxy.
MCP Streamable HTTP endpoints too: JSON-RPC requests are recorded per call (docs/mcp.md).
Realtime sessions over WebSocket too (OpenAI Realtime, Gemini Live; docs/realtime.md).

Options:
  --upstream URL        Where requests go in record, update and passthrough mode
                        (e.g. https://api.openai.com); optional in replay
  --tape FILE           Tape file (created in record and update mode)
  --store URL           Shared store instead of a tape: redis://[user:pass@]host:port/db
                        or rediss:// (TLS); ?namespace=NAME&ttl=SECONDS (docs/redis.md)
  --mode MODE           replay (default) | record | update | passthrough | once
                        (else TAPEDECK_MODE or CACHE_MODE)
  --port N              Port (default 8080; 0 picks a free one)
  --host HOST           Interface (default 127.0.0.1)
  --match MODE          LLM matching: exact (default) | signature | sequential | hybrid
  --strict-order        A request repeated more often than recorded is a miss
                        (default: the last recording is served again)
  --timing T            Stream and realtime replay: none (default) | recorded |
                        <ms between chunks>
  --tls                 Serve HTTPS and WSS (OpenAI's realtime clients only speak wss:)
                        with a certificate for localhost and 127.0.0.1 made at start
  --tls-ca FILE         With --tls: write the CA that signed it here, to trust it
                        (NODE_EXTRA_CA_CERTS=FILE, or the client's { ca } option)
  --tls-cert FILE       With --tls: your own certificate (PEM) instead, with --tls-key
  --tls-key FILE        The key of --tls-cert (PEM)
  --record-errors       Record upstream 4xx/5xx answers too
  --on-record-failure W When an answer cannot be recorded (disk full, tape lock held,
                        Redis down): fail (default: 503 E_RECORD_FAILED, or a cut
                        stream) | serve (the live answer, x-tapedeck-recorded: false)
  --prune-unused        At shutdown, remove the recordings no request used (and say which)
  --max-body SIZE       Largest request body (default 32m; e.g. 512k, 8m)
  --miss-status N       HTTP status of a replay miss (default 400)
  --match-header NAME   Header that takes part in matching non-JSON requests (repeatable)
  --body-match MODE     Non-JSON bodies (uploads, forms): bytes (default: keyed by their
                        normalized bytes) | route (ignored: one recording per route)
  --host-match MODE     origin (default: a recording answers requests to the upstream
                        origin it was recorded for; a loopback host's port is not
                        compared) | any (any host's recording answers, this one's first)
  --ignore-arg NAME     Request argument left out of LLM request keys (repeatable)
  --volatile-text RE    Text in messages that changes from run to run (a regular
                        expression, e.g. "\\d{4}-\\d{2}-\\d{2}"): replaced before keying
                        (repeatable; docs/matching.md lists common patterns)
  --redact-header NAME  Extra header to redact (repeatable)
  --redact-field NAME   Extra JSON field to redact (repeatable)
  --redact-query NAME   Extra URL query parameter to redact (repeatable)
  --keep-secrets        Store secrets as they are (tapes that never leave the machine)
  --replay-store FILE   Keep POST /v1/replay answers in this tape, across restarts
                        (default: in memory; TAPEDECK_REPLAY_* settings apply)
  --connect-timeout MS  Longest wait to connect to the upstream (default 10000)
  --idle-timeout MS     Longest time without a byte from the upstream, the wait for
                        the headers included (default 600000: 10 minutes, the OpenAI
                        and Anthropic SDKs' own timeout). Past it: 504
                        E_UPSTREAM_TIMEOUT, or a cut stream; nothing is recorded
  --request-timeout MS  Longest time a client may take to send its request, body
                        included, HTTP/1.1 or HTTP/2 (default 120000); a slower one
                        gets 408 and is cut (within a tenth of it, at most 1 s)
  --shutdown-timeout MS On SIGINT/SIGTERM, how long in-flight requests may finish
                        before their upstream calls are aborted (default 10000)
  --cancel-grace MS     MCP replay of a call the client cancelled when recorded: how
                        much longer than recorded it may take to cancel it before it
                        is a miss (default 2000)
  --chaos SPEC          Faults on demand (docs/chaos.md): a comma list of fault or
                        fault:rate (rate 0..1, default 1) among 429, 500, 503, 529
                        (overloaded), timeout (headers never come), reset (socket
                        dropped before the headers), cut (stream dropped after 2
                        events; cut=N after N), stall, malformed (one event with
                        broken JSON), close (a realtime session closed 1011 in the
                        middle of a response), plus latency=MS; e.g.
                        429:0.2,cut:0.1,latency=150 or close:0.5.
                        Each in the provider's own error shape, never recorded,
                        marked x-tapedeck-fault; a request can force one with the
                        header x-tapedeck-chaos: FAULT (or forbid it: none)
  --chaos-seed N        Seed of the fault sequence (default random, printed with
                        the first fault): the same seed injects the same faults
  --chaos-attempts N    Only the first N attempts of a faulted call fail; the retry
                        after them gets the recorded answer
  --chaos-stall MS      Pause between stream events of a stall fault (default 2000)
  --chaos-live          Allow chaos in record, update and passthrough mode, in front
                        of the live API (refused there otherwise)
                        The --chaos-* settings work without --chaos too, for the
                        faults requests force with x-tapedeck-chaos
  --hooks FILE          A JavaScript module exporting beforeRecord, beforeReplay
                        and/or match(request, recording) (docs/hooks.md)
  --quiet               No startup and shutdown lines, no line per miss (with
                        --port 0, the proxy's URL alone on stdout, for scripts)
`;

/** Parses sizes such as 1024, 512k, 8m, 1g (bytes, powers of 1024). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)i?b?$/i.exec(text.trim());
  if (!m) throw new TapedeckError('E_ARG', `Invalid size ${JSON.stringify(text)}.`, { hint: 'Use bytes or a k/m/g suffix, e.g. 512k or 32m.' });
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.floor(Number(m[1]) * mult);
}

function parseTiming(text: string): Timing {
  if (text === 'none' || text === 'recorded') return text;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new TapedeckError('E_ARG', `Invalid --timing ${JSON.stringify(text)}.`, { hint: 'Use none, recorded, or a number of milliseconds between chunks.' });
  }
  return n;
}

function parseInteger(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new TapedeckError('E_ARG', `Invalid --${name} ${JSON.stringify(text)}.`, { hint: `Use an integer from ${min} to ${max}.` });
  }
  return n;
}

// setTimeout's limit (a signed 32-bit count of milliseconds).
const MAX_MS = 2_147_483_647;

function parseMs(name: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_MS) {
    throw new TapedeckError('E_ARG', `Invalid --${name} ${JSON.stringify(text)}.`, { hint: `Use a whole number of milliseconds from 1 to ${MAX_MS}, e.g. --${name} 30000.` });
  }
  return n;
}

/** The options of `tapedeck serve`. */
const SERVE_OPTIONS = {
  upstream: { type: 'string' },
  tape: { type: 'string' },
  store: { type: 'string' },
  mode: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  match: { type: 'string' },
  'strict-order': { type: 'boolean' },
  timing: { type: 'string' },
  'record-errors': { type: 'boolean' },
  'prune-unused': { type: 'boolean' },
  'max-body': { type: 'string' },
  'miss-status': { type: 'string' },
  'match-header': { type: 'string', multiple: true },
  'body-match': { type: 'string' },
  'host-match': { type: 'string' },
  'ignore-arg': { type: 'string', multiple: true },
  'volatile-text': { type: 'string', multiple: true },
  'redact-header': { type: 'string', multiple: true },
  'redact-field': { type: 'string', multiple: true },
  'redact-query': { type: 'string', multiple: true },
  'keep-secrets': { type: 'boolean' },
  'replay-store': { type: 'string' },
  'connect-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  'cancel-grace': { type: 'string' },
  'request-timeout': { type: 'string' },
  'on-record-failure': { type: 'string' },
  hooks: { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  chaos: { type: 'string' },
  'chaos-seed': { type: 'string' },
  'chaos-attempts': { type: 'string' },
  'chaos-stall': { type: 'string' },
  'chaos-live': { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parses `tapedeck serve` arguments into proxy options (exported for tests). */
export function serveOptions(args: string[]): ServeOptions & { quiet: boolean; help: boolean; replayStore?: string; hooks?: string; tlsFiles?: { caFile?: string; certFile?: string; keyFile?: string } } {
  let parsed;
  try {
    parsed = parseArgs({
      args: dashValues(args, SERVE_OPTIONS),
      options: SERVE_OPTIONS,
      strict: true,
      allowPositionals: false,
    });
  } catch (e) {
    // parseArgs quotes what it did not expect: a store URL there may hold a password.
    const { message, didYouMean } = argsError(e, SERVE_OPTIONS);
    throw new TapedeckError('E_USAGE', maskRedisUrl(message), { hint: `${didYouMean}Run tapedeck serve --help for the options.` });
  }
  const v = parsed.values;
  const match = v.match;
  if (match !== undefined && !['exact', 'signature', 'sequential', 'hybrid'].includes(match)) {
    throw new TapedeckError('E_ARG', `Invalid --match ${JSON.stringify(match)}.`, { hint: 'Use exact, signature, sequential or hybrid.' });
  }
  const onRecordFailure = v['on-record-failure'];
  if (onRecordFailure !== undefined && onRecordFailure !== 'fail' && onRecordFailure !== 'serve') {
    throw new TapedeckError('E_ARG', `Invalid --on-record-failure ${JSON.stringify(onRecordFailure)}.`, { hint: 'Use fail (the default) or serve.' });
  }
  const bodyMatch = v['body-match'];
  if (bodyMatch !== undefined && bodyMatch !== 'bytes' && bodyMatch !== 'route') {
    throw new TapedeckError('E_ARG', `Invalid --body-match ${JSON.stringify(bodyMatch)}.`, { hint: 'Use bytes (the default) or route.' });
  }
  const hostMatch = v['host-match'];
  if (hostMatch !== undefined && hostMatch !== 'origin' && hostMatch !== 'any') {
    throw new TapedeckError('E_ARG', `Invalid --host-match ${JSON.stringify(hostMatch)}.`, { hint: "Use origin (the default: a recording answers requests to the upstream it was recorded for) or any (any host's recording answers)." });
  }
  // Named as the flag it came from (the library would call it the `mode` option).
  if (v.mode !== undefined && !(TAPE_MODES as readonly string[]).includes(v.mode.trim().toLowerCase())) {
    throw new TapedeckError('E_MODE', `Invalid --mode ${JSON.stringify(v.mode)}.`, { hint: `Use one of ${TAPE_MODES.join(', ')} (without --mode: TAPEDECK_MODE, else replay).` });
  }
  checkServeStore(v.tape, v.store);
  const tlsFlag = v['tls-ca'] !== undefined ? '--tls-ca' : v['tls-cert'] !== undefined ? '--tls-cert' : v['tls-key'] !== undefined ? '--tls-key' : undefined;
  if (tlsFlag && v.tls !== true) throw new TapedeckError('E_ARG', `${tlsFlag} needs --tls.`, { hint: 'Add --tls to serve HTTPS and WSS.' });
  // Without --chaos, the settings alone: they apply to the faults a request forces with the
  // x-tapedeck-chaos header, which needs no --chaos (none is injected by rate).
  const chaosFlags = ['chaos-seed', 'chaos-attempts', 'chaos-stall', 'chaos-live'] as const;
  const chaos: ChaosOptions | undefined =
    v.chaos === undefined && chaosFlags.every((f) => v[f] === undefined)
      ? undefined
      : {
          ...(v.chaos !== undefined ? parseChaosSpec(v.chaos, 'proxy') : {}),
          ...(v['chaos-seed'] !== undefined ? { seed: parseInteger('chaos-seed', v['chaos-seed'], 0, 2_147_483_647) } : {}),
          ...(v['chaos-attempts'] !== undefined ? { attempts: parseInteger('chaos-attempts', v['chaos-attempts'], 1, 1_000_000) } : {}),
          ...(v['chaos-stall'] !== undefined ? { stallMs: parseMs('chaos-stall', v['chaos-stall']) } : {}),
          ...(v['chaos-live'] === true ? { live: true } : {}),
        };
  return {
    ...(v.tls === true ? { tlsFiles: { caFile: v['tls-ca'], certFile: v['tls-cert'], keyFile: v['tls-key'] } } : {}),
    help: v.help === true,
    ...(chaos ? { chaos } : {}),
    replayStore: v['replay-store'],
    ...(v.hooks !== undefined ? { hooks: v.hooks } : {}),
    quiet: v.quiet === true,
    upstream: v.upstream,
    tape: v.tape,
    ...(v.store !== undefined ? { store: v.store } : {}),
    // Checked where the proxy is made (Deck.check), with the valid modes in the message.
    mode: v.mode as TapeMode | undefined,
    port: v.port === undefined ? 8080 : parseInteger('port', v.port, 0, 65535),
    host: v.host ?? '127.0.0.1',
    match: match as ServeOptions['match'],
    strictOrder: v['strict-order'] === true,
    timing: v.timing === undefined ? 'none' : parseTiming(v.timing),
    recordErrors: v['record-errors'] === true,
    ...(onRecordFailure ? { onRecordFailure } : {}),
    pruneUnused: v['prune-unused'] === true,
    maxBodyBytes: v['max-body'] === undefined ? undefined : parseSize(v['max-body']),
    missStatus: v['miss-status'] === undefined ? undefined : parseInteger('miss-status', v['miss-status'], 400, 599),
    matchHeaders: v['match-header'],
    ...(bodyMatch ? { bodyMatch } : {}),
    ...(hostMatch ? { hostMatch } : {}),
    ignoreArgs: v['ignore-arg'],
    ...(v['volatile-text'] ? { volatileText: v['volatile-text'] } : {}),
    redact: { headers: v['redact-header'], fields: v['redact-field'], query: v['redact-query'], keepSecrets: v['keep-secrets'] === true },
    ...(v['connect-timeout'] !== undefined ? { connectTimeoutMs: parseMs('connect-timeout', v['connect-timeout']) } : {}),
    ...(v['idle-timeout'] !== undefined ? { idleTimeoutMs: parseMs('idle-timeout', v['idle-timeout']) } : {}),
    ...(v['shutdown-timeout'] !== undefined ? { shutdownTimeoutMs: parseMs('shutdown-timeout', v['shutdown-timeout']) } : {}),
    ...(v['cancel-grace'] !== undefined ? { cancelGraceMs: parseInteger('cancel-grace', v['cancel-grace'], 0, MAX_MS) } : {}),
    ...(v['request-timeout'] !== undefined ? { requestTimeoutMs: parseMs('request-timeout', v['request-timeout']) } : {}),
  };
}

/**
 * Runs `tapedeck serve` until SIGINT or SIGTERM, then shuts down within a bound: in-flight
 * requests get `--shutdown-timeout` to finish (then their upstream calls are aborted and not
 * recorded), pending records are written, the tape is closed. Returns the exit code.
 *
 * @example
 * process.exitCode = await serveCommand(['--upstream', 'https://api.openai.com', '--tape', 'app.tape', '--mode', 'record'])
 */
export async function serveCommand(args: string[]): Promise<number> {
  let opts: ReturnType<typeof serveOptions>;
  try {
    opts = serveOptions(args);
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    return reportCliError(e);
  }
  if (opts.help) {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  const log = (m: string) => {
    if (!opts.quiet) process.stderr.write(`${m}\n`);
  };
  let proxy;
  let durable: DurableReplayStore | undefined;
  try {
    // Answers are replayable by trace token (POST /v1/replay).
    durable = opts.replayStore ? await DurableReplayStore.open(opts.replayStore) : undefined;
    const replay = durable ?? new ReplayStore();
    const hooks = opts.hooks !== undefined ? await loadHooksModule(opts.hooks) : {};
    const tls = opts.tlsFiles ? await tlsMaterial(opts.tlsFiles) : undefined;
    if (opts.tlsFiles?.caFile !== undefined && tls?.ca) log(`tapedeck serve: wrote the CA of its TLS certificate to ${opts.tlsFiles.caFile} (trust it: NODE_EXTRA_CA_CERTS=${opts.tlsFiles.caFile})`);
    // The command's own flags stay here: startProxy refuses names it does not take.
    const { quiet: _quiet, help: _help, replayStore: _replayStore, hooks: _hooks, tlsFiles: _tlsFiles, ...serve } = opts;
    proxy = await startProxy({ ...serve, ...hooks, ...(tls ? { tls } : {}), replay, onWarning: (m) => process.stderr.write(`tapedeck serve: ${m.replace(/^tapedeck: /, '')}\n`), onMiss: (m) => log(`tapedeck serve: miss: ${m}`) });
  } catch (e) {
    await durable?.close().catch(() => {});
    return reportCliError(e);
  }
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        log(`tapedeck serve: ${signal} again, exiting without waiting`);
        resolve(EXIT.interrupted);
        return;
      }
      stopping = true;
      log(`tapedeck serve: ${signal}, finishing ${proxy.handler.inFlight} in-flight request(s) (at most ${opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS} ms)`);
      proxy
        .close()
        .then(() => durable?.close())
        .then(
        () => {
          const st = proxy.handler.stats();
          // MCP exchanges count with the HTTP ones: the proxy served both.
          const m = st.mcp ?? { hits: 0, misses: 0, recorded: 0, appendFailures: 0 };
          const failures = st.appendFailures + m.appendFailures;
          const unrecorded = failures > 0 ? `, ${failures} not recorded (${st.unrecorded} of them served anyway)` : '';
          const faults = st.faults ? `, faults injected: ${Object.entries(st.faults).map(([f, n]) => `${f} ${n}`).join(', ')}` : '';
          // Realtime sessions count apart: a run that recorded only sessions must not read as
          // one that recorded nothing.
          const rt = st.realtime;
          const sessions = rt && rt.replayed + rt.recorded + rt.misses > 0 ? `; realtime sessions: ${rt.replayed} replayed, ${rt.misses} missed, ${rt.recorded} recorded` : '';
          log(`tapedeck serve: closed (${st.hits + m.hits} hit(s), ${st.misses + m.misses} miss(es), ${st.recorded + m.recorded - m.appendFailures} recorded${unrecorded}${faults}${sessions})`);
          resolve(0);
        },
        (e: unknown) => {
          // With its code and hint on a line of their own, as every other CLI failure: the
          // store's hint (bring Redis back) and what the failure left undone are the fix.
          process.stderr.write(`tapedeck serve: shutdown failed: ${formatCliError(e).replace(/^tapedeck: /, '')}`);
          resolve(1);
        },
      );
    };
    // `on`, not `once`: a second signal must reach stop() (exit 130 at once), not Node's default.
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  // Only now say it is up: whoever waits for this line may signal at once.
  // Quiet, a port the system chose is still said, alone on stdout: a fixture that starts the
  // proxy (a Python conftest, a shell script) has no other way to learn where to send requests.
  if (opts.quiet && opts.port === 0) process.stdout.write(`${proxy.url}\n`);
  const s = proxy.handler.stats();
  // Behind a corporate proxy the calls go out through it (./env-proxy-tunnel.ts): said by the
  // variable's name, never its value, which may hold a password. A replay sends nothing.
  const via = opts.upstream && s.mode !== 'replay' ? proxyVariableFor(upstreamTarget(opts.upstream).base) : undefined;
  log(`tapedeck serve: listening on ${proxy.url} (mode ${s.mode}, ${opts.store !== undefined ? `store ${s.tape ?? '-'}` : `tape ${opts.tape ?? '-'}`}, ${s.recordings} recording(s)${s.mcpRecordings ? `, ${s.mcpRecordings} MCP exchange(s)` : ''}${s.realtimeSessions ? `, ${s.realtimeSessions} realtime session(s)` : ''}${opts.upstream ? `, upstream ${shownUpstream(opts.upstream)}${via ? ` through the proxy ${via} names` : ''}` : ''})`);
  return stopped;
}
