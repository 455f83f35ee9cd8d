/**
 * Newline-delimited JSON, the framing of MCP over stdio: one JSON-RPC message per line, UTF-8,
 * no embedded newlines. Bytes are split on LF only, so a multi-byte character never splits.
 */
import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each complete line of a stream (without its LF, a trailing CR dropped)
 * and `onEnd` once the stream ends (a last line without LF is delivered first).
 *
 * @example
 * readLines(child.stdout, (line) => handle(JSON.parse(line)), () => done())
 */
export function readLines(stream: Readable, onLine: (line: string) => void, onEnd?: () => void): void {
  let pending: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(pending).toString('utf8');
      pending = [];
      start = nl + 1;
      const text = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (text.trim() !== '') onLine(text);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
  stream.on('end', () => {
    const rest = Buffer.concat(pending).toString('utf8').trim();
    pending = [];
    if (rest !== '') onLine(rest);
    onEnd?.();
  });
}
