/** line-endings.ts for browser builds: not told apart from other damage in a page. */
import type { TapedeckError } from '../errors.ts';

export function convertedLineEndings(_buf: Uint8Array): 'LF to CRLF' | 'CRLF to LF' | undefined {
  return undefined;
}

export function withoutAddedCRs(_buf: Uint8Array, _from: number, _n: number): { bytes: Uint8Array; end: number } | undefined {
  return undefined;
}

export function convertedTape(_file: string, _how: string, _at?: number): TapedeckError {
  throw new Error('unreachable in a page');
}
