/**
 * The fetch switch: routes `globalThis.fetch` through a tape for a scope, for code that calls the
 * global fetch (or builds its SDK client deep inside) and takes no `fetch` option.
 *
 * One wrapper is installed while any switch is on. Each call is routed by the switch of the
 * current async context (a switch entered with `run()`), else by the most recently installed
 * switch: concurrent tests that each `run()` their body under their own switch do not see each
 * other's tapes. Requests to hosts the switch does not list go to the original fetch untouched,
 * or are refused with `E_NETWORK_BLOCKED` when the switch blocks the network.
 *
 * Covered: everything that calls `globalThis.fetch` at call time, and clients that capture it
 * after install (the OpenAI SDK reads it when the client is constructed). Not covered: clients
 * built on `node:http`/`node:https` (axios's Node adapter, got, older SDKs on node-fetch), clients
 * that captured the global fetch before install, and `undici.request`/`undici.fetch` from the
 * npm package: they never call the global fetch, and undici's global dispatcher would not reach
 * `node:http` either (docs/vitest.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TapedeckError } from '../errors.ts';
import { checkOptionNames, describeArgument, optionNames } from '../option-names.ts';
import { fetchInterceptorRunning } from './own-fetch.ts';

/** A host as listed: `api.openai.com`, `127.0.0.1:8080` (exact host and port), `*.openai.com`, or a RegExp on `host[:port]`. */
export type HostPattern = string | RegExp;

/**
 * Options of installFetchSwitch: where routed requests go, which hosts are routed, and whether
 * others are refused.
 */
export interface FetchSwitchOptions {
  /** Where routed requests go: a tapedeck fetch (createFetch) or any fetch. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Hosts routed through `fetch`; default every host. */
  hosts?: readonly HostPattern[];
  /**
   * Refuse requests to hosts not in `hosts` (and not in `allowHosts`) with E_NETWORK_BLOCKED
   * instead of sending them, so an unrecorded call cannot reach a live API. Default false.
   */
  blockNetwork?: boolean;
  /** Hosts that still reach the network untouched when `blockNetwork` is on (e.g. a local database's HTTP API). */
  allowHosts?: readonly HostPattern[];
  /**
   * Called with each request `blockNetwork` refused, before the caller gets E_NETWORK_BLOCKED:
   * code that catches the error (a telemetry call, a fallback answer) leaves no other trace of
   * it. The test tapes count them for the run summary.
   */
  onRefused?: (refusal: { host: string; url: string }) => void;
}

/** The names installFetchSwitch takes (checked against FetchSwitchOptions). */
const FETCH_SWITCH_OPTIONS = optionNames<FetchSwitchOptions>()(['fetch', 'hosts', 'blockNetwork', 'allowHosts', 'onRefused']);

/** An installed switch. `uninstall()` (or leaving a `using` block) restores the previous fetch. */
export interface FetchSwitch {
  readonly installed: boolean;
  /** Runs fn with this switch routing the global fetch for fn's async context, whatever else is installed. */
  run<T>(fn: () => T): T;
  uninstall(): void;
  [Symbol.dispose](): void;
}

interface Scope {
  route(url: URL): 'tape' | 'pass' | 'block';
  opts: FetchSwitchOptions;
}

/**
 * The switch of the current async context (set by run()), or `through`: inside a call the switch
 * routed to the tape, where the tape's own live calls (record and update mode) must reach the
 * network instead of coming back to the tape forever.
 */
const context = new AsyncLocalStorage<Scope | 'through'>();
/** Installed switches, oldest first; the last one routes calls made outside any run(). */
const active: Scope[] = [];
let original: typeof fetch | undefined;
let wrapper: typeof fetch | undefined;

function matches(p: HostPattern, url: URL): boolean {
  if (p instanceof RegExp) return p.test(url.host);
  const want = p.toLowerCase();
  const unbracket = (h: string) => h.replace(/^\[(.*)\]$/, '$1');
  const name = unbracket(url.hostname.toLowerCase());
  if (want.startsWith('*.')) return name.endsWith(want.slice(1));
  // `url.host` carries the port only when it is not the scheme's default.
  return url.host.toLowerCase() === want || name === unbracket(want);
}

function urlOf(input: string | URL | Request): URL | undefined {
  try {
    return new URL(input instanceof Request ? input.url : String(input));
  } catch {
    return undefined; // a relative URL: the original fetch reports it
  }
}

function dispatch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const store = context.getStore();
  const base = original!;
  if (store === 'through') return base(input, init);
  const scope = store ?? active[active.length - 1];
  if (!scope) return base(input, init);
  const url = urlOf(input);
  if (!url) return base(input, init);
  // A data: or blob: URL is read in this process, not sent anywhere: never recorded, never
  // blocked. The OpenAI and Anthropic SDKs fetch 'data:,' before every upload.
  if (url.protocol === 'data:' || url.protocol === 'blob:') return base(input, init);
  const how = scope.route(url);
  if (how === 'tape') return context.run('through', () => scope.opts.fetch(input, init));
  if (how === 'pass') return base(input, init);
  try {
    scope.opts.onRefused?.({ host: url.host, url: `${url.origin}${url.pathname}` });
  } catch {
    // A counter that throws must not turn the refusal into another error.
  }
  return Promise.reject(
    new TapedeckError('E_NETWORK_BLOCKED', `Blocked a request to ${url.host} (${url.origin}${url.pathname}): the network is blocked and this host is not routed through a tape.`, {
      host: url.host,
      url: `${url.origin}${url.pathname}`,
      // With MSW running, "let it through" would read as through to the network: it goes to MSW.
      hint: `Add ${JSON.stringify(url.host)} to hosts (to record and replay it) or to allowHosts (to let it through${fetchInterceptorRunning() ? ' to MSW, which is running: it answers what its handlers match' : ''}).`,
    }),
  );
}

/** Whether the warning for a switch of every host beside MSW was given (once a process). */
let warnedAllHosts = false;

/**
 * Routes `globalThis.fetch` through `opts.fetch` until uninstalled; other hosts pass through
 * (or are refused with `blockNetwork`). Switches nest: uninstalling one restores the routing of
 * the others, and the last one out puts the original fetch back.
 *
 * @example
 * import { createFetch, installFetchSwitch } from 'llm-tapedeck/proxy'
 * const tape = createFetch({ tape: 'test/__tapes__/app.tape' })
 * const sw = installFetchSwitch({ fetch: tape, hosts: ['api.openai.com'], blockNetwork: true })
 * try {
 *   await runAppCodeThatCallsGlobalFetch()
 * } finally {
 *   sw.uninstall()
 *   await tape.close()
 * }
 */
export function installFetchSwitch(opts: FetchSwitchOptions): FetchSwitch {
  if (typeof opts?.fetch !== 'function') {
    throw new TapedeckError('E_ARG', 'installFetchSwitch needs a fetch to route requests to.', { hint: "Pass { fetch: createFetch({ tape: 'app.tape' }) }." });
  }
  // A misspelt option (`blocknetwork`) or a host the patterns never match (a URL) left the
  // calls going to the network in a test meant to be hermetic: refused before anything is installed.
  checkOptionNames(opts, FETCH_SWITCH_OPTIONS, 'installFetchSwitch', 'docs/api.md');
  for (const list of ['hosts', 'allowHosts'] as const) {
    const v: unknown = opts[list];
    if (v !== undefined && !Array.isArray(v)) {
      throw new TapedeckError('E_ARG', `installFetchSwitch: ${list} must be a list of hosts; got ${describeArgument(v)}.`, { option: list, hint: `Pass a list, even of one: ${list}: ['api.openai.com'].` });
    }
  }
  const hosts = opts.hosts;
  const allow = opts.allowHosts ?? [];
  for (const p of [...(hosts ?? []), ...allow]) {
    if (!(p instanceof RegExp) && (typeof p !== 'string' || p === '')) {
      throw new TapedeckError('E_ARG', `Invalid host pattern ${JSON.stringify(p)}.`, { hint: "Use a host such as 'api.openai.com', '127.0.0.1:8080', '*.openai.com', or a RegExp." });
    }
    if (typeof p === 'string' && /^[a-z][a-z0-9+.-]*:\/\/|\//i.test(p)) {
      const host = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([^/?#]*)/i.exec(p)![1];
      throw new TapedeckError('E_ARG', `Host pattern ${JSON.stringify(p)} is a URL, not a host: it would match no request, and the calls it was meant to catch would go on.`, {
        hint: `List the host (and port) alone: ${JSON.stringify(host).replaceAll('"', "'")}.`,
      });
    }
  }
  // Every host to the tape while MSW answers some of them: MSW's handlers no longer apply to
  // those, and recording sends them to the network instead. Said once a process.
  if (hosts === undefined && !warnedAllHosts && fetchInterceptorRunning()) {
    warnedAllHosts = true;
    process.emitWarning(
      "tapedeck: the fetch switch routes every host through the tape (no hosts given) while MSW is running: the requests MSW answers go to the tape instead, and recording sends them to the network. List the LLM's hosts only, e.g. install({ hosts: ['api.openai.com'] }), and MSW keeps answering the rest.",
      { code: 'TAPEDECK_SWITCH_ALL_HOSTS' },
    );
  }
  const scope: Scope = {
    opts,
    route(url) {
      if (hosts === undefined || hosts.some((p) => matches(p, url))) return 'tape';
      if (opts.blockNetwork && !allow.some((p) => matches(p, url))) return 'block';
      return 'pass';
    },
  };
  if (active.length === 0) {
    original = globalThis.fetch;
    wrapper = dispatch as typeof fetch;
    globalThis.fetch = wrapper;
  }
  active.push(scope);
  let on = true;
  const sw: FetchSwitch = {
    get installed() {
      return on;
    },
    run: (fn) => context.run(scope, fn),
    uninstall() {
      if (!on) return;
      on = false;
      active.splice(active.indexOf(scope), 1);
      if (active.length > 0) return;
      // Someone replaced the global fetch on top of ours (a spy, another interceptor): theirs
      // stays; our wrapper passes everything to the original from now on.
      if (globalThis.fetch === wrapper) globalThis.fetch = original!;
      wrapper = undefined;
    },
    [Symbol.dispose]() {
      sw.uninstall();
    },
  };
  return sw;
}
