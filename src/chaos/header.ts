/**
 * The request header of faults on demand: it forces a fault or forbids one, and is never sent
 * upstream, stored nor keyed. Apart from the options (./options.ts), since browser bundles, which
 * leave faults out, still take the header off a request.
 */

/** The request header that forces a fault (`x-tapedeck-chaos: 429`) or forbids one (`none`); never sent upstream nor keyed. */
export const CHAOS_HEADER = 'x-tapedeck-chaos';

/**
 * The request without the chaos header (never sent upstream, stored, nor keyed), and its value.
 *
 * @example
 * withoutChaosHeader({ method: 'POST', url: '/v1/x', headers: { 'x-tapedeck-chaos': '429' }, body }).value // '429'
 */
export function withoutChaosHeader<R extends { headers: Readonly<Record<string, string | string[] | undefined>> }>(req: R): { req: R; value: string | undefined } {
  const v = req.headers[CHAOS_HEADER];
  if (v === undefined) return { req, value: undefined };
  const { [CHAOS_HEADER]: _drop, ...headers } = req.headers;
  return { req: { ...req, headers }, value: Array.isArray(v) ? v[0] : v };
}
