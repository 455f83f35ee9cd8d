// The wasm export surface of the browser's build: index.ts's, less the number routines exported
// on their own (parseNumber, formatNumber, writeCanonicalNumber), which only the differential
// tests call, on the builds for Node (test/number.test.ts). Without them the build is ~0.7 KB
// smaller, within the browser entry's budget of 100 KB gzipped; the canonical writer keeps
// what it uses of them. Nor does it export the UTF-16 transcoder (utf16ToUtf8): the loader copies
// a long string's UTF-16 units into memory with Buffer, which a page has not, and encodes with
// TextEncoder instead; left out, the build is ~1.1 KB smaller gzipped.
export { result, canonical, digests, pow5Table, prepare, MAX_DEPTH, sha256, sha256Init, sha256Update, sha256Final, sha256Many, pathChain, traceToken } from "./index";
