/** line-endings.ts for browser builds: not told apart from other damage in a page. */
import type { TapedeckError } from '../errors.ts';
// The tape codec's readers: a type only (erased), so line-endings.ts stays out of the page.
import type { FrameCodec } from './line-endings.ts';

export type { FrameCodec };

export function convertedLineEndings(_buf: Uint8Array): 'LF to CRLF' | 'CRLF to LF' | undefined {
  return undefined;
}

export function withoutAddedCRs(_buf: Uint8Array, _from: number, _n: number): { bytes: Uint8Array; end: number } | undefined {
  return undefined;
}

export function convertedTape(_file: string, _how: string, _at?: number): TapedeckError {
  throw new Error('unreachable in a page');
}

export function framesReadWithoutAddedCRs(_buf: Uint8Array, _pos: number, _stop: number, _c: FrameCodec): boolean {
  return false;
}

export function headerReadsWithoutAddedCRs(_buf: Uint8Array, _file: string, _c: FrameCodec): boolean {
  return false;
}
