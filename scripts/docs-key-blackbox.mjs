// Runs the built library (dist/) as a black box over a file of request-key cases and writes
// what it returns, for scripts/docs-key-check.mjs.
//
//   node scripts/docs-key-blackbox.mjs CASES.json OUT.json
//
// CASES.json: [{ body: <JSON text>, options? }]. OUT.json: one entry per case, either
// { provider, view: <canonical text>, key, messageHashes, pathHashes, signature, signatureDigest }
// or { error: <code>, path? }; plus `raw`: what requestDigests() returns for the same body as
// UTF-8 bytes (key, hashes and signature, or the error code), which must equal requestKeys().
import { readFileSync, writeFileSync } from 'node:fs';
import { canonicalize, requestDigests, requestKeys } from '../dist/index.js';

const [casesPath, outPath] = process.argv.slice(2);
if (!casesPath || !outPath) {
  console.error('usage: node scripts/docs-key-blackbox.mjs CASES.json OUT.json');
  process.exit(2);
}
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const dec = new TextDecoder();
const enc = new TextEncoder();
const raw = (body, options) => {
  try {
    const r = requestDigests(enc.encode(body), options ?? {});
    return { key: r.key, messageHashes: r.messageHashes, pathHashes: r.pathHashes, signature: r.signature };
  } catch (e) {
    if (!e || typeof e.code !== 'string') throw e;
    return { error: e.code };
  }
};
const out = cases.map(({ body, options }) => ({ ...keys(body, options), raw: raw(body, options) }));
writeFileSync(outPath, JSON.stringify(out));

function keys(body, options) {
  try {
    const r = requestKeys(body, options ?? {});
    return {
      provider: r.provider,
      view: dec.decode(canonicalize(r.view)),
      key: r.key,
      messageHashes: r.messageHashes,
      pathHashes: r.pathHashes,
      signature: r.signature,
      signatureDigest: r.signatureDigest,
    };
  } catch (e) {
    if (!e || typeof e.code !== 'string') throw e;
    return e.path === undefined ? { error: e.code } : { error: e.code, path: e.path };
  }
}
