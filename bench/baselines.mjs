// Pure-JS baseline pipelines computing the same outputs as tapedeck:
//
//   fullSet(messages) -> { messageHashes, pathHashes, digest }
//     m_i    = hex SHA-256(canonical(messages[i]))
//     p_0    = m_0, p_i = hex SHA-256(p_{i-1} + ":" + m_i)
//     digest = hex SHA-256(canonical(messages))
//   many(values)      -> hex digest of each element (no chain)
//   digest(value)     -> hex SHA-256(canonical(value))
//
// Each baseline has an "object" entry point (JS value in) and a "raw" entry
// point (UTF-8 JSON bytes in), the latter paying for UTF-8 decode + JSON.parse
// as a pure-JS pipeline must.

import { hash as nodeHash, createHash } from 'node:crypto';
import { Buffer } from 'node:buffer';
import sss from 'safe-stable-stringify';
import canonicalizeRef from 'canonicalize';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** hex SHA-256 of a JS string (UTF-8) via node:crypto. */
const sha256HexNode = typeof nodeHash === 'function'
  ? (s) => nodeHash('sha256', s, 'hex')
  : (s) => createHash('sha256').update(s, 'utf8').digest('hex');

/** hex SHA-256 of a JS string (UTF-8) via @noble/hashes. */
const sha256HexNoble = (s) => bytesToHex(nobleSha256(utf8ToBytes(s)));

/** Zero-copy UTF-8 decode of a Uint8Array, then JSON.parse. */
function parseBytes(bytes) {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return JSON.parse(text);
}

function makePipeline(name, stringify, sha256Hex, canonical) {
  function fullSet(messages) {
    const n = messages.length;
    const parts = new Array(n);
    const messageHashes = new Array(n);
    const pathHashes = new Array(n);
    let prev = '';
    for (let i = 0; i < n; i++) {
      const s = stringify(messages[i]);
      parts[i] = s;
      const m = sha256Hex(s);
      messageHashes[i] = m;
      prev = i === 0 ? m : sha256Hex(prev + ':' + m);
      pathHashes[i] = prev;
    }
    // canonical(array) is '[' + canonical elements joined by ',' + ']'
    const digest = sha256Hex('[' + parts.join(',') + ']');
    return { messageHashes, pathHashes, digest };
  }
  function many(values) {
    const n = values.length;
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = sha256Hex(stringify(values[i]));
    return out;
  }
  function digest(value) {
    return sha256Hex(stringify(value));
  }
  return {
    name,
    canonical,
    fullSet,
    fullSetRaw: (bytes) => fullSet(parseBytes(bytes)),
    many,
    manyRaw: (bytes) => many(parseBytes(bytes)),
    digest,
    digestRaw: (bytes) => digest(parseBytes(bytes)),
  };
}

export const BASELINES = [
  // Best pure-JS canonical pipeline: fast deterministic stringify + native SHA-256.
  makePipeline('sss+node:crypto', sss, sha256HexNode, true),
  // The RFC 8785 reference implementation + a pure-JS SHA-256.
  makePipeline('canonicalize+noble', canonicalizeRef, sha256HexNoble, true),
  // Non-canonical lower bound: same shape of work, key order not normalized.
  makePipeline('JSON.stringify+node:crypto', JSON.stringify, sha256HexNode, false),
];
