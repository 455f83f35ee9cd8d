/**
 * The upstream timeouts of the proxy and of createFetch: their options, defaults and check.
 * Apart from ./upstream.ts, which browser bundles swap for a plain fetch (./upstream.browser.ts):
 * both check the same options.
 */
import { TapedeckError } from '../errors.ts';

/** How long the upstream may take, in milliseconds (HandlerOptions, FetchOptions). */
export interface UpstreamTimeouts {
  /**
   * Longest wait for the TCP (and TLS) connection to the upstream (default 10 s). Applies to
   * Node's built-in fetch; a `fetch` of your own connects by its own rules (the idle timeout
   * still bounds the whole wait for the answer).
   */
  connectTimeoutMs?: number;
  /**
   * Longest time without a byte from the upstream, the wait for the response headers included
   * (default 10 minutes, the OpenAI and Anthropic SDKs' own request timeout: a reasoning model
   * may think for minutes before its first byte).
   */
  idleTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** How long close() lets in-flight exchanges finish before aborting their upstream calls. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
// setTimeout fires at once for anything larger (it is a signed 32-bit count of ms).
const MAX_TIMER_MS = 2_147_483_647;

const FLAGS: Record<string, string> = {
  connectTimeoutMs: '--connect-timeout',
  idleTimeoutMs: '--idle-timeout',
  shutdownTimeoutMs: '--shutdown-timeout',
};

/**
 * Validates a timeout option (whole milliseconds, 1 to 2^31-1); undefined gives the default.
 *
 * @example
 * timeoutOption({ idleTimeoutMs: 5000 }, 'idleTimeoutMs', DEFAULT_IDLE_TIMEOUT_MS) // 5000
 */
export function timeoutOption(opts: object, name: 'connectTimeoutMs' | 'idleTimeoutMs' | 'shutdownTimeoutMs', fallback: number): number {
  const v = (opts as Record<string, unknown>)[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TIMER_MS) {
    throw new TapedeckError('E_ARG', `Invalid ${name} ${typeof v === 'string' ? JSON.stringify(v) : String(v)}.`, {
      hint: `Use a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (tapedeck serve ${FLAGS[name]} <ms>).`,
    });
  }
  return v;
}


/**
 * Validates `cancelGraceMs` (whole milliseconds, 0 to 2^31-1); undefined leaves the MCP
 * session's default.
 *
 * @example
 * graceOption(300) // 300
 */
export function graceOption(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TIMER_MS) {
    throw new TapedeckError('E_ARG', `Invalid cancelGraceMs ${typeof v === 'string' ? JSON.stringify(v) : String(v)}.`, {
      hint: `Use a whole number of milliseconds from 0 to ${MAX_TIMER_MS} (tapedeck serve --cancel-grace <ms>).`,
    });
  }
  return v;
}
