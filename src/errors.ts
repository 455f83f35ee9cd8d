import { brand } from './error-brand.ts';

/**
 * Stable error codes. A code never changes meaning once published; tests and users match on it.
 *
 * - `E_JSON`: the text is not valid JSON (RFC 8259); `offset` is the byte where it fails.
 * - `E_UTF8`: the bytes are not valid UTF-8; `offset` is the first byte of the bad sequence.
 * - `E_LONE_SURROGATE`: a string holds an unpaired UTF-16 surrogate, which has no UTF-8 form.
 * - `E_DUPLICATE_KEY`: an object repeats a member name; RFC 8785 has no canonical form for it.
 * - `E_NON_FINITE`: NaN or ±Infinity, or a number literal too large for a double.
 * - `E_DEPTH`: nesting deeper than {@link MAX_DEPTH}.
 * - `E_TOO_LARGE`: input larger than {@link MAX_INPUT_BYTES}.
 * - `E_NOT_ARRAY`: an operation over message lists got something other than an array.
 * - `E_BIGINT`, `E_CYCLE`, `E_TYPE`: a JavaScript value with no JSON form.
 * - `E_ARG`: an argument of the wrong kind (a trace-token field with NUL, a bad option...).
 * - `E_BACKEND`: the requested backend cannot run here.
 * - `E_MEMORY`: WebAssembly memory could not grow.
 * - `E_REQUEST`: a body that is not an LLM request tapedeck recognizes (src/providers/normalize.ts).
 * - `E_MISS`: no recording answers a request. `message` is one short line (what differs from
 *   the closest recording, and the fix that exists at the entry point used) plus at most two
 *   excerpt lines; `details` holds the diagnostics (`difference`, `kind`, `fix`, `fixes`,
 *   `closest`, `used`, and `report`, the whole diagnosis as text).
 * - `E_RECORDING`: a recording without a usable `request`.
 * - `E_RECORDINGS_DIR`: a recordings directory that cannot be read.
 * - `E_TAPE_CORRUPT`: a tape whose header is damaged (damaged records are warnings, never
 *   errors: the good ones are kept); `E_TAPE_TORN_TAIL` is the warning for a crash mid-append.
 * - `E_TAPE_LOCKED`: another writer held the tape's lock past the timeout (the holder is named).
 * - `E_TAPE_IN_USE`: an import with force would replace a tape a writer has open for recording
 *   (registered in `<tape>.writers/`); `details.writers` names them (pid, host, run).
 * - `E_TAPE_EXISTS`, `E_TAPE_NOT_FOUND`, `E_TAPE_VERSION`, `E_TAPE_IO`: creating over an
 *   existing tape, a missing tape, a tape from a newer format, a file system error.
 * - `E_TAPE_CHANGED`: a large tape's record read after the open is no longer where it was (the
 *   file was written in place, or removed or replaced after a close); `file` names it. On a
 *   Redis store: the namespace was emptied and made again by another writer (another redaction
 *   salt) while a record run was open; that run's records are refused, `url` names the store.
 * - `E_TAPE_MERGE`: `tapedeck merge` cannot combine the two sides of a tape (different redaction
 *   salts or format versions, a damaged header); nothing was written and git keeps the conflict.
 * - `E_TREE`: input the conversation tree cannot place (empty conversation, malformed hashes).
 * - `E_CONFIG`: a bad setting, from an option or an environment variable (which one is named).
 * - `E_REPLAY_CONFLICT`: a replay entry whose trace token contradicts its document id.
 * - `E_UPSTREAM`: the proxy could not reach the upstream API (HTTP 502).
 * - `E_UPSTREAM_TIMEOUT`: the upstream did not connect within the connect timeout, or sent no
 *   byte for the idle timeout (HTTP 504); `details.timeout` is `connect` or `idle`,
 *   `details.limitMs` the limit. Nothing is recorded.
 * - `E_BODY_TOO_LARGE`: a request body over the proxy's limit (HTTP 413).
 * - `E_PROXY_CLOSED`: a request to a proxy that is shutting down (HTTP 503, worth a retry), or
 *   to a tapedeck fetch that is closed (HTTP 400, final).
 * - `E_PROXY_INTERNAL`: an unexpected failure inside the proxy (HTTP 500): a bug to report.
 * - `E_LISTEN`: the proxy cannot listen where it was told (the port in use, an address not
 *   this machine's, a privileged port); `details.host` and `details.port` say where.
 * - `E_HOOK`: a user's `beforeRecord`, `beforeReplay` or `match` threw (HTTP 500 from the proxy);
 *   `details.hook` names it, `cause` is what it threw, and its stack is printed on stderr.
 * - `E_SIGNATURE`: a SigV4 request signed with the proxy's own access key id whose signature the
 *   proxy cannot verify, is outside AWS's 15-minute window, or is scoped to a service the route
 *   is not for (HTTP 403, AWS's `InvalidSignatureException`); nothing was sent upstream.
 * - `E_FOREIGN_ORIGIN`: a proxy whose upstream URL carries its own credentials refused a request
 *   from a web page of another origin, or naming a Host not its own (HTTP 403); nothing was sent upstream.
 * - `E_EVENT_STREAM`: bytes that are not a whole AWS event stream (a CRC that does not match, a
 *   header that runs past its block, a stream cut inside a message); `offset` is the stream byte.
 * - `E_NETWORK_BLOCKED`: the fetch switch refused a request to a host it does not route through a
 *   tape while the network is blocked (`blockNetwork`).
 * - `E_FETCH_STUBBED`: a live call (record, update or passthrough mode) refused because the global
 *   fetch was already replaced (a test's stub or spy) when llm-tapedeck was imported and no
 *   `fetch` option was given: its answers would have been recorded as the provider's. Also a live
 *   call that MSW's interceptor, on the global fetch since before the import, answered or refused
 *   itself.
 * - `E_CHAOS_SPEC`: a chaos SPEC (`--chaos`) or an `x-tapedeck-chaos` header naming no fault.
 * - `E_CHAOS_MODE`: chaos asked for in record, update or passthrough mode without `--chaos-live`.
 * - `E_CHAOS`: an answer chaos injected (in the provider's error shape where it has one), never
 *   the API's; `details.fault` names the fault.
 * - `E_CLOSED`: a call on a ReplayCache, or on recordings, after their close().
 * - `E_MODE`: a tape mode that is not one (the `mode` option or TAPEDECK_MODE), or a recording
 *   mode where nothing can be recorded (a tape loaded in a page).
 * - `E_FORWARD_PROXY`: `tapedeck serve` sent a request as to a forward proxy (CONNECT, or an
 *   absolute URL from HTTP_PROXY / HTTPS_PROXY): point the client's base URL at it instead.
 * - `E_HEADERS_TOO_LARGE`: `tapedeck serve` refused a request whose headers passed Node's limit
 *   (HTTP 431); raise it with NODE_OPTIONS=--max-http-header-size=N, or send fewer cookies.
 * - `E_PROXY_BODY`: a body parser mounted before createHandler already read the request body,
 *   which cannot be turned back into the bytes the client sent.
 * - `E_PROXY_PATH`: a request path whose `..` segments climb above its root (HTTP 400); nothing
 *   is forwarded.
 * - `E_REQUEST_ENCODING`: a request Content-Encoding that is not supported, or a body that is not
 *   what its encoding says.
 * - `E_RECORD_FAILED`: a live answer whose record could not be stored (a full disk, a tape lock
 *   held, Redis gone), so it is not served as if it were recorded.
 * - `E_TAPE_DAMAGED`: the recording a call is owed (or the audio a realtime session refers to)
 *   is damaged or missing on the tape; no other call's recording takes its place.
 * - `E_TAPE_TYPE`: a value of a tape type (registerTapeType) whose class is not registered in
 *   this process.
 * - `E_TAPE_IMPORT`: tape JSON `importTapeJSON` / `tapedeck import` cannot take (not an export,
 *   a review-form export, a bad origin); nothing is written.
 * - Warnings when a store is read (`warnings[].code`; the good records are kept): `E_TAPE_EMPTY`
 *   (a 0-byte tape: a crash before its header was written), `E_TAPE_HEADER` (a damaged header:
 *   its metadata is lost, `tapedeck prune` writes a fresh one), `E_REPLAY_RECORD` (a replay
 *   record DurableReplayStore cannot read back), `E_STORE_DAMAGED` (a Redis namespace whose
 *   index was lost; its records are still served).
 * - Redis stores: `E_STORE_UNAVAILABLE` (the server cannot be reached, or stopped answering),
 *   `E_STORE` (it refused a command; what that write held was not stored).
 * - Command line only: `E_USAGE` (an unknown command or option, a missing argument; exit 2),
 *   `E_FILE` (a path that is missing, a directory where a file is expected, or unreadable),
 *   `E_IMPORT_FORMAT` (input `tapedeck import` does not read; no tape is written),
 *   `E_IMPORT_PARSE` (a HAR, cassette, nock, fixture or talkback file that does not parse or is cut short:
 *   `file`, `offset` or `line`), `E_IMPORT_ENTRY` (one entry of such a file is malformed:
 *   `file`, `entry` (its index) and `field`; nothing is written unless `--skip-bad`),
 *   `E_OUTPUT` (stdout could not be written: a full disk, an I/O error; `errno` is the
 *   system's code, and the output is incomplete: exit 1),
 *   `E_INTERNAL` (an unexpected failure: a bug to report, with the stack from `--debug`);
 *   for `tapedeck diff`, `stats` and `rerecord` (exit 2, docs/drift.md): `E_DIFF_INPUT` (a tape
 *   compared with a folder), `E_GIT` (no git work tree, or a revision git does not know),
 *   `E_PRICES` (a bad `--prices` file), `E_CONFIRM` (rerecord without `--yes` or `--budget`:
 *   nothing was sent), `E_RERECORD_EMPTY` (no HTTP recording to send again).
 */
export type TapedeckErrorCode =
  | 'E_JSON'
  | 'E_UTF8'
  | 'E_LONE_SURROGATE'
  | 'E_DUPLICATE_KEY'
  | 'E_NON_FINITE'
  | 'E_DEPTH'
  | 'E_TOO_LARGE'
  | 'E_NOT_ARRAY'
  | 'E_BIGINT'
  | 'E_CYCLE'
  | 'E_TYPE'
  | 'E_ARG'
  | 'E_BACKEND'
  | 'E_MEMORY'
  | 'E_REQUEST'
  | 'E_MISS'
  | 'E_RECORDING'
  | 'E_RECORDINGS_DIR'
  | 'E_TAPE_CORRUPT'
  | 'E_TAPE_TORN_TAIL'
  | 'E_TAPE_LOCKED'
  | 'E_TAPE_EXISTS'
  | 'E_TAPE_NOT_FOUND'
  | 'E_TAPE_VERSION'
  | 'E_TAPE_IO'
  | 'E_TAPE_CHANGED'
  | 'E_TAPE_MERGE'
  | 'E_TREE'
  | 'E_CONFIG'
  | 'E_REPLAY_CONFLICT'
  | 'E_UPSTREAM'
  | 'E_UPSTREAM_TIMEOUT'
  | 'E_BODY_TOO_LARGE'
  | 'E_PROXY_CLOSED'
  | 'E_PROXY_INTERNAL'
  | 'E_LISTEN'
  | 'E_HOOK'
  | 'E_SIGNATURE'
  | 'E_NETWORK_BLOCKED'
  | 'E_FETCH_STUBBED'
  | 'E_CHAOS_SPEC'
  | 'E_CHAOS_MODE'
  // The codes of the store, the proxy, drift and the command line: docs/api.md "Errors" says
  // where each is described.
  | 'E_CHAOS'
  | 'E_CLOSED'
  | 'E_CONFIRM'
  | 'E_DIFF_INPUT'
  | 'E_EVENT_STREAM'
  | 'E_FILE'
  | 'E_FOREIGN_ORIGIN'
  | 'E_FORWARD_PROXY'
  | 'E_HEADERS_TOO_LARGE'
  | 'E_GIT'
  | 'E_IMPORT_ENTRY'
  | 'E_IMPORT_FORMAT'
  | 'E_IMPORT_PARSE'
  | 'E_INTERNAL'
  | 'E_MODE'
  | 'E_OUTPUT'
  | 'E_PRICES'
  | 'E_PROXY_BODY'
  | 'E_PROXY_PATH'
  | 'E_RECORD_FAILED'
  | 'E_REPLAY_RECORD'
  | 'E_REQUEST_ENCODING'
  | 'E_RERECORD_EMPTY'
  | 'E_STORE'
  | 'E_STORE_DAMAGED'
  | 'E_STORE_UNAVAILABLE'
  | 'E_TAPE_DAMAGED'
  | 'E_TAPE_EMPTY'
  | 'E_TAPE_HEADER'
  | 'E_TAPE_IMPORT'
  | 'E_TAPE_IN_USE'
  | 'E_TAPE_TYPE'
  | 'E_USAGE'
  | (string & {});

/**
 * What a TapedeckError carries besides its message: where it happened, how to fix it, and per code
 * more (E_MISS: the diagnosis).
 */
export interface TapedeckErrorDetails {
  /** Byte offset into the UTF-8 input, for errors in JSON text. */
  offset?: number;
  /** JSON path such as `$.messages[3].content`, for errors in JavaScript values. */
  path?: string;
  /** What to do about it. */
  hint?: string;
  [key: string]: unknown;
}

// A message that does not end a sentence gets a full stop before its hint: a system error's
// words end without one ("ENOSPC: no space left on device, write"), and the hint after them
// read as the same sentence.
const ENDED = /[.!?:]\s*$|\n$/;

/**
 * The message with its hint at the end, unless the message says the hint already: a miss's
 * first line ends with its fix, which is its hint too, and saying it twice reads as noise.
 */
function withHint(message: string, hint: string | undefined): string {
  if (!hint || message.includes(hint)) return message;
  return `${message}${ENDED.test(message) ? '' : '.'} ${hint}`;
}

/**
 * The one error type tapedeck throws. `code` is stable; `message` says what was expected, what
 * was found, where, and how to fix it.
 *
 * @example
 * try { hashJSON('{"a":1,"a":2}') } catch (e) {
 *   if (e instanceof TapedeckError && e.code === 'E_DUPLICATE_KEY') console.log(e.offset) // 7
 * }
 */
export class TapedeckError extends Error {
  readonly code: TapedeckErrorCode;
  readonly offset: number | undefined;
  readonly path: string | undefined;
  readonly hint: string | undefined;
  readonly details: TapedeckErrorDetails;

  constructor(code: TapedeckErrorCode, message: string, details: TapedeckErrorDetails = {}) {
    super(withHint(message, details.hint));
    this.name = 'TapedeckError';
    this.code = code;
    this.offset = details.offset;
    this.path = details.path;
    this.hint = details.hint;
    this.details = details;
  }
}

// An error of another copy of the library (jest's CommonJS bundle, the browser entry in Node)
// is a TapedeckError too: src/error-brand.ts.
brand(TapedeckError);

/**
 * The same error with context put in front of its message (the tape it came from, the record).
 * The constructor ends a message with its hint: prefixing `e.message` and passing the hint again
 * would say the hint twice, so the message is taken without it.
 *
 * @example
 * withContext(e, 'chat.tape.json: ', { file: 'chat.tape.json' }) // 'chat.tape.json: Cannot import … <hint>'
 */
export function withContext(e: TapedeckError, prefix: string, details: TapedeckErrorDetails = {}): TapedeckError {
  const tail = e.hint ? ` ${e.hint}` : '';
  const message = tail && e.message.endsWith(tail) ? e.message.slice(0, -tail.length) : e.message;
  return new TapedeckError(e.code, `${prefix}${message}`, { ...e.details, ...details });
}

/** Deepest nesting of arrays and objects accepted (the wasm reader's container stack). */
export const MAX_DEPTH = 512;
/** Largest JSON input accepted, in UTF-8 bytes (64 MiB). */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;
