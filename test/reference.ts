// Independent oracles for the differential tests: the `canonicalize` package (the RFC 8785
// authors' reference for JavaScript) and node:crypto. Nothing here imports tapedeck code.
import { createHash } from 'node:crypto';
import canonicalizeRef from 'canonicalize';

export const refCanonical = (v: unknown): string => canonicalizeRef(v) as string;
export const refSha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
export const refDigest = (v: unknown): string => refSha256Hex(refCanonical(v));

export function refPathHashes(messages: unknown[]): { messageHashes: string[]; pathHashes: string[]; digest: string } {
  const messageHashes = messages.map(refDigest);
  const pathHashes: string[] = [];
  messageHashes.forEach((m, i) => pathHashes.push(i === 0 ? m : refSha256Hex(`${pathHashes[i - 1]}:${m}`)));
  return { messageHashes, pathHashes, digest: refDigest(messages) };
}

export function refTraceToken(t: {
  documentId: string;
  documentVersion: string;
  model: string;
  systemPromptVersion: string;
  selectedIds: string[];
}): string {
  // Sort by UTF-8 bytes, as Go's sort.Strings does in the spec's originating system.
  const ids = [...t.selectedIds].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return refSha256Hex([t.documentId, t.documentVersion, t.model, t.systemPromptVersion, ids.join('\0')].join('\0'));
}

/** Deterministic PRNG (mulberry32) so failures reproduce from the printed seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const text = (b: Uint8Array): string => new TextDecoder().decode(b);
