/** tape-header-salt.ts for browser builds: a page reads a damaged header without its salt. */

export function keptSalt(_head: Uint8Array, _what: unknown): { salt: string; note: string } | undefined {
  return undefined;
}
